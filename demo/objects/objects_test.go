package objects

import (
	"strings"
	"testing"
	"time"
)

func TestSetConditionKeepsTransitionTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	list := SetCondition(nil, V1beta1("Ready", false, "Info", "X", "m", t0))
	list = SetCondition(list, V1beta1("Ready", false, "Info", "Y", "m2", t0.Add(time.Hour)))
	if got := list[0].(map[string]any)["lastTransitionTime"]; got != Time(t0) {
		t.Errorf("same status moved the transition time to %v", got)
	}
	list = SetCondition(list, V1beta1("Ready", true, "", "", "", t0.Add(2*time.Hour)))
	c := list[0].(map[string]any)
	if c["lastTransitionTime"] != Time(t0.Add(2*time.Hour)) {
		t.Errorf("a status change kept the old transition time")
	}
	if _, ok := c["severity"]; ok {
		t.Error("a True v1beta1 condition carries a severity")
	}
	if len(list) != 1 {
		t.Errorf("%d conditions", len(list))
	}
}

func TestSortV1beta1(t *testing.T) {
	now := time.Now()
	got := SortV1beta1([]any{V1beta1("WorkersReady", true, "", "", "", now), V1beta1("Ready", true, "", "", "", now), V1beta1("ControlPlaneReady", true, "", "", "", now)})
	var types []string
	for _, c := range got {
		types = append(types, c.(map[string]any)["type"].(string))
	}
	if strings.Join(types, ",") != "Ready,ControlPlaneReady,WorkersReady" {
		t.Errorf("order %v", types)
	}
}

func TestNames(t *testing.T) {
	n := NewNames(1)
	seen := map[string]bool{}
	for range 2000 {
		s := n.Suffix(5)
		if seen[s] {
			t.Fatalf("suffix %s handed out twice", s)
		}
		seen[s] = true
		for _, r := range s {
			if !strings.ContainsRune(alphabet, r) {
				t.Fatalf("suffix %s outside the name alphabet", s)
			}
		}
	}
	var last string
	for range 241 {
		last = n.IP(SubnetWorkers)
	}
	if last != "10.20.9.10" {
		t.Errorf("the 241st worker address is %s, want the next /24", last)
	}
}
