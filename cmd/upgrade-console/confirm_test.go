package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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
		// The output is not the terminal (apply > upgrade.log): the
		// prompt is asked on the terminal, and the log keeps it.
		var out bytes.Buffer
		err = confirm(context.Background(), tty, &out, "mgmt")
		// The terminal's output arrives in pieces (the echo, then the
		// prompt): read until the prompt is there.
		shown := make(chan string, 1)
		go func() {
			var got []byte
			b := make([]byte, 4096)
			for !bytes.Contains(got, []byte("type the cluster name to confirm: ")) {
				n, err := ptmx.Read(b)
				got = append(got, b[:n]...)
				if err != nil {
					break
				}
			}
			shown <- string(got)
		}()
		var screen string
		select {
		case screen = <-shown:
		case <-time.After(5 * time.Second):
		}
		_ = ptmx.Close()
		_ = tty.Close()
		if !strings.Contains(out.String(), "type the cluster name to confirm: (asked on the terminal)") || !strings.Contains(screen, "type the cluster name to confirm: ") {
			t.Errorf("%q: output %q, terminal %q", c.typed, out.String(), screen)
		}
		var ie *model.InputError
		switch {
		case c.ok && err != nil:
			t.Errorf("%q refused: %v", c.typed, err)
		case !c.ok && (!errors.As(err, &ie) || !strings.Contains(err.Error(), "nothing was changed")):
			t.Errorf("%q: %v, want a refusal saying nothing changed", c.typed, err)
		}
	}
	// Not a terminal: a wrong command line for a run that cannot be
	// confirmed (exit 2, as the help says), with the way out.
	err := confirm(context.Background(), strings.NewReader("mgmt\n"), &bytes.Buffer{}, "mgmt")
	var ie *model.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "pass --yes") || !strings.Contains(err.Error(), "run it in a terminal") || exitCode(err) != ExitUsage {
		t.Errorf("without a terminal: %v (exit %d, want %d)", err, exitCode(err), ExitUsage)
	}
}

// ctrl-c at the prompt ends it at once, though nothing was typed.
func TestConfirmInterruptedAtThePrompt(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- confirm(ctx, tty, &bytes.Buffer{}, "mgmt") }()
	cancel()
	select {
	case err := <-done:
		if !strings.Contains(fmt.Sprint(err), "interrupted at the prompt: nothing was changed") || exitCode(err) != ExitBadInput {
			t.Fatalf("confirm = %v (exit %d)", err, exitCode(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt ignored the interruption")
	}
}
