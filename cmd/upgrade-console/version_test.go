package main

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// version -o json is for CI logs: its field set is pinned, a rename fails
// here. It was an unknown flag (exit 2).
func TestVersionJSON(t *testing.T) {
	out, errOut, code := runCaptured(t, "version", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := sortedKeys(top); !reflect.DeepEqual(got, []string{"deps", "goVersion", "version"}) {
		t.Errorf("keys = %v", got)
	}
	var doc versionDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Version == "" || doc.GoVersion != runtime.Version() || doc.Deps == nil {
		t.Errorf("%+v (%v)", doc, err)
	}
	for _, d := range doc.Deps {
		if d.Path == "" || d.Version == "" {
			t.Errorf("dep %+v", d)
		}
	}

	yout, _, code := runCaptured(t, "version", "-o", "yaml")
	var fromYAML versionDoc
	if err := yaml.Unmarshal([]byte(yout), &fromYAML); err != nil || code != ExitOK || !reflect.DeepEqual(fromYAML, doc) {
		t.Errorf("yaml: exit %d, %v, %+v, want %+v", code, err, fromYAML, doc)
	}

	text, _, code := runCaptured(t, "version")
	if code != ExitOK || !strings.HasPrefix(text, "upgrade-console "+doc.Version+"\n") {
		t.Errorf("text: exit %d, %q", code, text)
	}
	if _, errOut, code := runCaptured(t, "version", "-o", "xml"); code != ExitBadInput || !strings.Contains(errOut, `unknown format "xml"`) {
		t.Errorf("-o xml: exit %d, %q", code, errOut)
	}
}
