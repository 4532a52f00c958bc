package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{withCode(ExitTimeout, errors.New("late")), ExitTimeout},
		{usageError{errors.New("no --cluster")}, ExitUsage},
		{&model.InputError{Source: "a.yaml", Problem: "bad"}, ExitBadInput},
		// The watcher's or the UI's own bug, however wrapped on its way up.
		{fmt.Errorf("terminal UI: %w", &model.InternalError{Where: "the terminal UI", Panic: "boom"}), ExitInternal},
		{errors.New("anything else"), ExitBadInput},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// A bad --request-timeout is named in the fix; it was told to give
// --kubeconfig.
func TestKubeconfigErrorNamesTheFlagAtFault(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	_, errOut, code := runCaptured(t, "lock", "status", "--cluster", "mgmt", "--kubeconfig", kubeconfig, "--request-timeout", "abc")
	if code != ExitBadInput || !strings.Contains(errOut, "give --request-timeout a duration such as 30s") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
