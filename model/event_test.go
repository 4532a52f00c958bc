package model

import (
	"testing"
	"time"
)

// TestEventNewer: the later LastTimestamp first; within one second, the
// later write (larger resourceVersion).
func TestEventNewer(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		a, b Event
		want bool
	}{
		{"later time", Event{LastTimestamp: t0.Add(time.Second), ResourceVersion: 1}, Event{LastTimestamp: t0, ResourceVersion: 9}, true},
		{"earlier time", Event{LastTimestamp: t0, ResourceVersion: 9}, Event{LastTimestamp: t0.Add(time.Second), ResourceVersion: 1}, false},
		{"same time, later write", Event{LastTimestamp: t0, ResourceVersion: 9}, Event{LastTimestamp: t0, ResourceVersion: 1}, true},
		{"same time, same write", Event{LastTimestamp: t0, ResourceVersion: 9}, Event{LastTimestamp: t0, ResourceVersion: 9}, false},
	} {
		if got := c.a.Newer(&c.b); got != c.want {
			t.Errorf("%s: Newer = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestEventIdentity: the UID when there is one; the namespaced name from a
// source without UIDs; nothing to go by otherwise, so two such events are
// never taken for one.
func TestEventIdentity(t *testing.T) {
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{UID: "u1", Namespace: "eksa-system", Name: "e1"}, "u1"},
		{Event{Namespace: "eksa-system", Name: "e1"}, "eksa-system/e1"},
		{Event{Namespace: "eksa-system"}, ""},
	} {
		if got := c.e.Identity(); got != c.want {
			t.Errorf("Identity(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
}
