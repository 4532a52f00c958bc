package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// missingCluster is a snapshot of `watch --cluster nosuch` on a management
// cluster: no Cluster of that name, and the cluster's Nodes, which no
// Machine of a cluster called nosuch claims. synced says whether the
// Cluster's watch has listed yet.
func missingCluster(synced bool) *model.ClusterState {
	s := fixtureHealthy()
	s.ClusterName = "nosuch"
	s.Conn = model.ConnFlags{{Name: "context", Value: "admin@mgmt"}}
	s.Cluster, s.ControlPlane, s.CAPICluster = nil, nil, nil
	s.Machines = model.List[model.Machine]{}
	s.MachineDeployments = nil
	if !synced {
		s.Sources[model.KindEKSACluster] = model.SourceStatus{Installed: true, Version: "v1alpha1"}
	}
	return s
}

func startMissingApp(t *testing.T) (*teatest.TestModel, *chanSource) {
	t.Helper()
	src := newChanSource(t)
	opts := Options{Source: src, Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)}
	app := NewApp(opts, NewDashboard(opts))
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	return tm, src
}

// A --cluster that names no Cluster ends the dashboard once the Cluster's
// watch has listed, with the plain watch's error (exit 1): it opened on a
// cluster "not found" with the management cluster's Nodes listed under it,
// and exited 0 on q.
func TestDashboardEndsOnAClusterItsFirstListDidNotFind(t *testing.T) {
	tm, src := startMissingApp(t)
	// Before the list nothing is known: the dashboard waits.
	src.ch <- missingCluster(false)
	waitForText(t, tm, "syncing")
	src.ch <- missingCluster(true)
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*App)
	err := final.Err()
	var in *model.InputError
	if !errors.As(err, &in) {
		t.Fatalf("Err() = %v (%T), want the plain watch's InputError", err, err)
	}
	want := upgrade.ClusterNotFound("default", "nosuch", model.ConnFlags{{Name: "context", Value: "admin@mgmt"}})
	if err.Error() != want.Error() {
		t.Errorf("Err() = %q\nwant     %q", err, want)
	}
	for _, s := range []string{"Cluster default/nosuch: not found", "check --cluster", "-A --context admin@mgmt` lists them"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Err() = %q, missing %q", err, s)
		}
	}
}

// A Cluster seen and then deleted is not a mistyped name: the dashboard
// stays, saying so, and q ends it as any other.
func TestDashboardStaysWhenTheClusterIsDeletedAfterItWasSeen(t *testing.T) {
	tm, src := startMissingApp(t)
	src.ch <- fixtureHealthy()
	waitForText(t, tm, "gen ")
	gone := fixtureHealthy()
	gone.Version++
	gone.Cluster = nil
	src.ch <- gone
	waitForText(t, tm, "EKS-A Cluster default/mgmt not found")
	app, _ := finish(t, tm)
	if err := app.Err(); err != nil {
		t.Fatalf("Err() = %v, want nil: the dashboard followed a Cluster that was there", err)
	}
}

// A Cluster the console may not read says nothing of whether it is there.
func TestDashboardStaysWhileTheClusterIsForbidden(t *testing.T) {
	tm, src := startMissingApp(t)
	s := missingCluster(true)
	s.Sources[model.KindEKSACluster] = model.SourceStatus{Installed: true, Synced: true, Version: "v1alpha1",
		Forbidden: "list clusters.anywhere.eks.amazonaws.com in default"}
	src.ch <- s
	waitForText(t, tm, "forbidden")
	app, _ := finish(t, tm)
	if err := app.Err(); err != nil {
		t.Fatalf("Err() = %v, want nil", err)
	}
}
