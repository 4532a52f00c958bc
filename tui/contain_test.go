package tui

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// panicky is a screen with a bug: it panics in Update on "u", in View once
// "v" was pressed, and returns a command that panics on "c", in a batch on
// "b", in a batch inside a sequence on "s".
type panicky struct {
	w, h      int
	viewPanic bool
}

func (p *panicky) Init() tea.Cmd { return nil }

func (p *panicky) Update(msg tea.Msg) (Screen, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "u":
			panic("a bug in Update")
		case "v":
			p.viewPanic = true
		case "c":
			return p, boom
		case "b":
			return p, tea.Batch(nil, func() tea.Msg { return nil }, boom)
		case "s":
			return p, tea.Sequence(func() tea.Msg { return nil }, tea.Batch(boom))
		}
	}
	return p, nil
}

// boom is a command with a bug; Bubble Tea runs it in a goroutine.
func boom() tea.Msg { panic("a bug in a command") }

func (p *panicky) View() string {
	if p.viewPanic {
		panic("a bug in View")
	}
	return fit("panicky screen", p.w)
}

func (p *panicky) SetSize(w, h int)          { p.w, p.h = w, h }
func (p *panicky) ShortHelp() []key.Binding  { return nil }
func (p *panicky) FullHelp() [][]key.Binding { return nil }

// A bug in a screen ends the program with an InternalError that RunApp
// returns, and the terminal never shows Bubble Tea's panic report.
func TestAPanicInTheUIEndsItWithAnInternalError(t *testing.T) {
	for _, k := range []string{"u", "v", "c", "b", "s"} {
		t.Run(k, func(t *testing.T) {
			app := NewApp(Options{Theme: themes.Mono}, &panicky{})
			tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24),
				teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
			waitForText(t, tm, "panicky screen")
			tm.Type(k)
			if k == "v" {
				// The next message after a panic in View quits.
				time.Sleep(50 * time.Millisecond)
				tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
			}
			tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
			final := tm.FinalModel(t).(*App)
			where := "the terminal UI"
			if k == "c" || k == "b" || k == "s" {
				where = "a task of the terminal UI"
			}
			var internal *model.InternalError
			if !errors.As(final.Err(), &internal) || internal.Where != where {
				t.Fatalf("Err() = %v, want an InternalError of %s", final.Err(), where)
			}
			out := tm.FinalOutput(t)
			buf := new(bytes.Buffer)
			_, _ = buf.ReadFrom(out)
			if bytes.Contains(buf.Bytes(), []byte("Caught panic")) {
				t.Errorf("Bubble Tea's panic report reached the terminal:\n%s", buf)
			}
		})
	}
}

// failingSource closes its channel and says why, as a watcher that stopped
// on an internal error does.
type failingSource struct {
	ch  chan *model.ClusterState
	err error
}

func (s *failingSource) Updates() <-chan *model.ClusterState { return s.ch }
func (s *failingSource) Err() error                          { return s.err }

func TestASourceThatFailsEndsTheApp(t *testing.T) {
	src := &failingSource{ch: make(chan *model.ClusterState), err: &model.InternalError{Where: "building snapshots", Panic: "boom"}}
	app := NewApp(Options{Theme: themes.Mono, Source: src}, &panicky{})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24))
	waitForText(t, tm, "panicky screen")
	close(src.ch)
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if err := tm.FinalModel(t).(*App).Err(); err != src.err {
		t.Fatalf("Err() = %v, want the source's error", err)
	}
}
