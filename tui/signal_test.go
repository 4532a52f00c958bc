package tui

import (
	"context"
	"errors"
	"io"
	"os/signal"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
)

// A SIGTERM ends the program as the operator's quit would, every time, also
// when the command's own context is cancelled by the same signal, as `watch`
// does. With Bubble Tea's signal handler the program hung in about half of
// such signals (see RunApp), so ten in a row would all but surely catch it.
func TestRunAppEndsOnSIGTERM(t *testing.T) {
	for i := range 10 {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		in, inW := io.Pipe()
		outR, out := io.Pipe()
		type result struct {
			outcome report.Outcome
			err     error
		}
		done := make(chan result, 1)
		go func() {
			o, err := RunApp(ctx, NewApp(Options{Theme: themes.Mono}, NewDashboard(Options{Theme: themes.Mono})),
				tea.WithInput(in), tea.WithOutput(out), tea.WithWindowSize(80, 24), tea.WithColorProfile(colorprofile.ASCII))
			done <- result{o, err}
		}()
		// The program is running once it writes; then the signal.
		buf := make([]byte, 4096)
		if _, err := outR.Read(buf); err != nil {
			t.Fatalf("signal %d: reading the program's output: %v", i, err)
		}
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("signal %d: RunApp returned %v, want the outcome of a quit", i, r.err)
			}
			if r.outcome != report.Running {
				t.Fatalf("signal %d: outcome %v, want %v", i, r.outcome, report.Running)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("signal %d: the program did not end 10 s after SIGTERM", i)
		}
		stop()
		inW.Close()
		out.Close()
	}
}

// A deadline of the caller's context (watch --timeout) ends the program with
// the deadline's error, for the command's exit code.
func TestRunAppDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	in, inW := io.Pipe()
	defer inW.Close()
	_, err := RunApp(ctx, NewApp(Options{Theme: themes.Mono}, NewDashboard(Options{Theme: themes.Mono})),
		tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithWindowSize(80, 24))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RunApp = %v, want the deadline", err)
	}
}

// SIGQUIT (ctrl-\) ends the program as a quit does: Go's own handling
// dumped every goroutine over the alternate screen, left the terminal raw
// and exited 2 (here it would end the test binary).
func TestRunAppEndsOnSIGQUIT(t *testing.T) {
	in, inW := io.Pipe()
	outR, out := io.Pipe()
	defer inW.Close()
	defer out.Close()
	done := make(chan error, 1)
	go func() {
		_, err := RunApp(context.Background(), NewApp(Options{Theme: themes.Mono}, NewDashboard(Options{Theme: themes.Mono})),
			tea.WithInput(in), tea.WithOutput(out), tea.WithWindowSize(80, 24), tea.WithColorProfile(colorprofile.ASCII))
		done <- err
	}()
	buf := make([]byte, 4096)
	if _, err := outR.Read(buf); err != nil {
		t.Fatalf("reading the program's output: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunApp returned %v, want the outcome of a quit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not end 10 s after SIGQUIT")
	}
}
