package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
)

// confirmedMsg is the API server's answer to a confirmation (nil: the
// snapshot is the cluster's state).
type confirmedMsg struct {
	asked uint64
	err   error
}

// completionConfirm follows the question the dashboard asks the API server
// before it says an upgrade is complete: one question at a time, asked when
// the judge first calls it done, and again after a refusal once the rule has
// held its time again.
type completionConfirm struct {
	asking    bool
	confirmed bool
	// asked counts the questions, so an answer to an earlier one is known.
	asked uint64
	err   error
}

// needed is the outcome to record while the judge says done: Done once the
// API server has confirmed, Running until then, with the question to ask
// when none is under way.
func (c *completionConfirm) needed(confirm func(context.Context, *model.ClusterState) error, s *model.ClusterState) (report.Outcome, tea.Cmd) {
	if c.confirmed {
		return report.Done, nil
	}
	if c.asking {
		return report.Running, nil
	}
	c.asking = true
	c.asked++
	n := c.asked
	return report.Running, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), model.ConfirmWithin)
		defer cancel()
		return confirmedMsg{asked: n, err: confirm(ctx, s)}
	}
}

// answered takes an answer in; it reports whether it was a refusal to act
// on (an answer to an earlier question, or to a judge that no longer says
// done, is dropped).
func (c *completionConfirm) answered(m confirmedMsg) (refused bool) {
	if !c.asking || m.asked != c.asked {
		return false
	}
	c.asking = false
	c.confirmed, c.err = m.err == nil, m.err
	return m.err != nil
}

// words is what the status line says instead of "upgrade complete" while
// the API server has not confirmed it; empty once it has (or when no
// question was asked).
func (c completionConfirm) words() string {
	switch {
	case c.confirmed:
		return ""
	case c.asking:
		return "every completion milestone met; confirming with the API server…"
	case c.err != nil:
		return "every completion milestone met, not confirmed by the API server (" + errText(c.err) + "); holding again"
	}
	return ""
}
