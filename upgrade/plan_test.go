package upgrade

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
)

func TestUniqueSkipsKeepsFirstSeenOrder(t *testing.T) {
	got := uniqueSkips([]string{CheckNodesReady, CheckWorkersReady, CheckNodesReady, CheckWorkersReady, CheckNoFailureMessage})
	want := []string{CheckNodesReady, CheckWorkersReady, CheckNoFailureMessage}
	if !slices.Equal(got, want) {
		t.Errorf("uniqueSkips = %v, want %v", got, want)
	}
	if got := uniqueSkips(nil); got != nil {
		t.Errorf("uniqueSkips(nil) = %v, want nil (omitted from JSON)", got)
	}
}

// plan --skip X --skip X lists X once in the plan (and so in its JSON and
// the audit log).
func TestPlanSkipGivenTwiceIsListedOnce(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	p := w.plan(t, CheckNodesReady, CheckWorkersReady, CheckNodesReady)
	if want := []string{CheckNodesReady, CheckWorkersReady}; !slices.Equal(p.Skipped, want) {
		t.Errorf("Skipped = %v, want %v", p.Skipped, want)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"skipped":["` + CheckNodesReady + `","` + CheckWorkersReady + `"]`; !strings.Contains(string(data), want) {
		t.Errorf("plan JSON lacks %s", want)
	}
}
