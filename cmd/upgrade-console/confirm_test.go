package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/upgrade-console/upgrade-console/model"
)

// The typed confirmation reads a terminal: a pty stands in for the
// operator's.
func TestConfirmTypedClusterName(t *testing.T) {
	for _, c := range []struct {
		typed string
		ok    bool
	}{
		{"mgmt\n", true},
		{"  mgmt  \n", true},
		{"y\n", false},
		{"mgmt2\n", false},
	} {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ptmx.Write([]byte(c.typed)); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = confirm(tty, &out, "mgmt")
		_ = ptmx.Close()
		_ = tty.Close()
		if !strings.Contains(out.String(), "type the cluster name to confirm") {
			t.Errorf("%q: prompt %q", c.typed, out.String())
		}
		var ie *model.InputError
		switch {
		case c.ok && err != nil:
			t.Errorf("%q refused: %v", c.typed, err)
		case !c.ok && (!errors.As(err, &ie) || !strings.Contains(err.Error(), "nothing was changed")):
			t.Errorf("%q: %v, want a refusal saying nothing changed", c.typed, err)
		}
	}
	// Not a terminal: refused with the way out.
	err := confirm(strings.NewReader("mgmt\n"), &bytes.Buffer{}, "mgmt")
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--yes") {
		t.Errorf("without a terminal: %v", err)
	}
}
