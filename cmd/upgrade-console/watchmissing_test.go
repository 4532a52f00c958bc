package main

import (
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
)

// A --cluster that names no Cluster: the dashboard ends as the plain watch
// does, with its message and its exit code (1), where it opened on the
// management cluster's Nodes listed as "no machine" under a cluster "not
// found", and exited 0 on q.
func TestWatchDashboardEndsOnAClusterThatIsNotThere(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	args := []string{"watch", "--kubeconfig", w.KubeconfigPath, "--cluster", "nosuch"}
	_, plainErr, plainCode := runCaptured(t, append(args, "--plain")...)
	if plainCode != ExitBadInput || !strings.Contains(plainErr, "Cluster "+w.ClusterNamespace+"/nosuch: not found") {
		t.Fatalf("the plain watch: exit %d, stderr %q", plainCode, plainErr)
	}
	r := startInTerminal(t, t.TempDir(), args...)
	r.wait(t, time.Minute)
	if r.code != plainCode || r.stderr != plainErr {
		t.Errorf("the dashboard: exit %d, stderr %q\nthe plain watch: exit %d, stderr %q", r.code, r.stderr, plainCode, plainErr)
	}
	if strings.Contains(r.screen.String(), "no machine") {
		t.Errorf("the dashboard listed Nodes under a Cluster that is not there:\n%s", r.screen.String())
	}
}
