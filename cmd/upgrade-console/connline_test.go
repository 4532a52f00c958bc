package main

import (
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// apply --wait says a lost connection with its cause, as watch --plain
// does: it printed a bare "connection: reconnecting".
func TestApplyWaitSaysWhyTheConnectionWasLost(t *testing.T) {
	for _, c := range []struct {
		st   model.ClusterState
		want string
	}{
		{model.ClusterState{Connection: model.Reconnecting, ConnectionErr: "10.0.0.5:6443: net/http: TLS handshake timeout"},
			"connection: reconnecting: 10.0.0.5:6443: net/http: TLS handshake timeout"},
		{model.ClusterState{Connection: model.Live}, "connection: live"},
		{model.ClusterState{Connection: model.Reconnecting}, "connection: reconnecting"},
	} {
		if got := connectionLine(&c.st); got != c.want {
			t.Errorf("%s: %q, want %q", c.st.Connection, got, c.want)
		}
	}
}
