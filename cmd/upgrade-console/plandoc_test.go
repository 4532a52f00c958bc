package main

import (
	"encoding/json"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// The live plan's document, whose field set is the contract scripts read
// (README's table): a rename or a removal fails here. Its lists are []
// when empty, not left out, and its verdict is the exit code's.
func TestLivePlanDocument(t *testing.T) {
	p := &upgrade.Plan{Cluster: "mgmt", Namespace: "default", CurrentSpec: &model.SpecStatus{Reached: true},
		Components: []model.ComponentDiff{{Key: "flux", Name: "Flux", OldVersion: "v1", NewVersion: "v2", Change: model.ChangeMinor}},
		Preflight:  []model.CheckResult{{Name: "upgrade-lock", Status: model.CheckPass}},
		Target:     &upgrade.Target{SpecDryRun: &upgrade.DryRunResult{}}}
	doc := func(p *upgrade.Plan) map[string]json.RawMessage {
		t.Helper()
		data, err := json.Marshal(liveDoc(p))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := doc(p)
	want := []string{"apiVersion", "blocked", "cluster", "components", "conflicts", "currentSpec", "kind", "mayStart", "namespace", "needsForceConflicts", "preflight", "skipped", "versions"}
	if got := sortedKeys(m); !reflect.DeepEqual(got, want) {
		t.Errorf("keys = %v, want %v", got, want)
	}
	for k, v := range map[string]string{"apiVersion": `"upgrade-console/v1"`, "kind": `"Plan"`, "mayStart": "true", "blocked": "[]", "skipped": "[]", "conflicts": "[]", "needsForceConflicts": "false"} {
		if string(m[k]) != v {
			t.Errorf("%s = %s, want %s", k, m[k], v)
		}
	}

	// The dry run not made: whether there are conflicts is not known.
	noDry := *p
	noDry.Target = &upgrade.Target{}
	if got := string(doc(&noDry)["conflicts"]); got != "null" {
		t.Errorf("conflicts without a dry run = %s, want null", got)
	}

	// Conflicts: the checks let it start, the apply needs --force-conflicts
	// (exit 3 without); mayStart alone said it may go.
	conflicting := *p
	conflicting.Conflicts = []upgrade.FieldConflict{{Object: "Cluster default/mgmt", Field: ".spec.kubernetesVersion", Manager: "eks-a-cli"}}
	if m := doc(&conflicting); string(m["mayStart"]) != "true" || string(m["needsForceConflicts"]) != "true" {
		t.Errorf("with a conflict: mayStart %s, needsForceConflicts %s, want true, true", m["mayStart"], m["needsForceConflicts"])
	}

	blocked := *p
	blocked.Skipped = []string{"provider-refs"}
	blocked.Preflight = []model.CheckResult{{Name: "upgrade-lock", Status: model.CheckFail, Blocking: true}, {Name: "etcd-ready", Status: model.CheckFail, Blocking: true}}
	m = doc(&blocked)
	if string(m["mayStart"]) != "false" || string(m["blocked"]) != `["upgrade-lock","etcd-ready"]` || string(m["skipped"]) != `["provider-refs"]` {
		t.Errorf("mayStart %s, blocked %s, skipped %s", m["mayStart"], m["blocked"], m["skipped"])
	}

	// YAML is the same document.
	y, err := yaml.Marshal(liveDoc(p))
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML map[string]any
	if err := yaml.Unmarshal(y, &fromYAML); err != nil || fromYAML["conflicts"] == nil || fromYAML["mayStart"] != true || fromYAML["kind"] != "Plan" {
		t.Errorf("yaml %v:\n%s", err, y)
	}
}
