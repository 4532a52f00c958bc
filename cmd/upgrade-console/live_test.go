package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// A command that ends does not wait for ever for a watch that will not stop
// (client-go's reflectors sleeping out their backoff against an API server
// that is gone): it waits stopWithin, then ends.
func TestCloseDoesNotWaitForAWatchThatWillNotStop(t *testing.T) {
	stopped := false
	lv := &live{stop: func() { stopped = true }, done: make(chan struct{})}
	closed := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		lv.close()
		closed <- time.Since(start)
	}()
	select {
	case took := <-closed:
		if !stopped || took < stopWithin || took > stopWithin+time.Second {
			t.Errorf("close took %s (stopped %t), want the watch told to stop and %s waited", took, stopped, stopWithin)
		}
	case <-time.After(stopWithin + 10*time.Second):
		t.Fatal("close still waits for a watch that does not stop")
	}

	// One that stops is waited for, and no longer.
	done := make(chan struct{})
	lv = &live{stop: func() { close(done) }, done: done}
	start = time.Now()
	lv.close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("close of a watch that stops at once took %s", took)
	}
}

// A live connect checks the spec against the cluster's own CRDs, read as
// the spec's kinds are checked: a typo's refusal does not say the console's
// copy judged it (the CRD reads once ran after their context had ended).
func TestConnectChecksTheSpecWithTheClustersCRDs(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	data, err := os.ReadFile(w.TargetSpecPath)
	if err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(typo, []byte(strings.Replace(string(data), "  kubernetesVersion:", "  kubernetesVersio:", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &liveOptions{cluster: w.ClusterName, file: typo, syncTimeout: time.Minute}
	_, err = connectConfig(context.Background(), w.Config, "demo", nil, w.ClusterNamespace, l)
	var in *model.InputError
	if !errors.As(err, &in) || !strings.Contains(in.Fix, "did you mean kubernetesVersion?") || strings.Contains(in.Fix, "console's copy") {
		t.Errorf("connect with a typo: %v", err)
	}
}
