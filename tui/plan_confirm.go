package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// confirmDialog is the typed confirmation of the apply: the operator types
// the cluster name, as k9s asks for dangerous actions, so a reflexive "y" or
// enter never starts an upgrade. Field conflicts are shown and only taken
// over when the operator ticks the box (tab) explicitly.
type confirmDialog struct {
	opts  Options
	st    *styles
	input textinput.Model
	w, h  int

	cluster string
	plan    *upgrade.Plan
	dry     *upgrade.DryRunResult
	force   bool
	hint    []seg

	keys confirmKeys
}

type confirmKeys struct {
	Confirm key.Binding
	Force   key.Binding
	Cancel  key.Binding
}

func newConfirmDialog(opts Options, plan *upgrade.Plan, dry *upgrade.DryRunResult) *confirmDialog {
	d := &confirmDialog{opts: opts, cluster: plan.Cluster, plan: plan, dry: dry,
		keys: confirmKeys{
			Confirm: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
			Force:   key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "take over conflicting fields")),
			Cancel:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}}
	if len(dry.Conflicts) == 0 {
		d.keys.Force.SetEnabled(false)
	}
	d.input = textinput.New()
	d.input.Prompt = "> "
	d.input.Placeholder = "cluster name"
	d.input.CharLimit = 253
	d.setTheme(initialTheme(opts))
	return d
}

func (d *confirmDialog) setTheme(th *themes.Theme) {
	d.st = newStyles(th)
	ts := textinput.DefaultStyles(th.Dark)
	ts.Focused.Prompt = th.FilterMark
	ts.Focused.Text = th.FilterText
	d.input.SetStyles(ts)
}

func (d *confirmDialog) Init() tea.Cmd { return d.input.Focus() }

func (d *confirmDialog) SetSize(w, h int) {
	d.w, d.h = w, h
	d.input.SetWidth(max(min(w, 84)-10, 10))
}

func (d *confirmDialog) ShortHelp() []key.Binding {
	return []key.Binding{d.keys.Confirm, d.keys.Force, d.keys.Cancel}
}

func (d *confirmDialog) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }

// Typed reports what has been typed (tests).
func (d *confirmDialog) Typed() string { return d.input.Value() }

func (d *confirmDialog) Update(msg tea.Msg) (Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case ThemeMsg:
		d.setTheme(msg.Theme)
		return d, nil
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, d.keys.Cancel):
			return d, CloseDialog
		case key.Matches(msg, d.keys.Force):
			d.force = !d.force
			d.hint = nil
			return d, nil
		case key.Matches(msg, d.keys.Confirm):
			return d, d.submit()
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return d, cmd
}

func (d *confirmDialog) submit() tea.Cmd {
	typed := strings.TrimSpace(d.input.Value())
	switch {
	case typed != d.cluster:
		d.hint = []seg{{fmt.Sprintf("type %q exactly to apply, or esc to cancel", d.cluster), rFailure}}
		return nil
	case len(d.dry.Conflicts) > 0 && !d.force:
		d.hint = []seg{{fmt.Sprintf("%d field(s) belong to another manager: tab takes them over, or esc and resolve them", len(d.dry.Conflicts)), rFailure}}
		return nil
	}
	force := d.force
	return tea.Sequence(CloseDialog, func() tea.Msg { return applyConfirmedMsg{force: force} })
}

func (d *confirmDialog) View() string {
	st := d.st
	sym := st.th.Sym
	iw := max(min(d.w, 84)-4, 20) // the border and padding take 4
	var lines []line
	add := func(segs ...seg) { lines = append(lines, line{segs: segs}) }
	v := d.plan.Versions
	add(seg{"Apply the new spec to cluster ", rText}, seg{d.cluster, rCluster})
	add(seg{"EKS-A " + v.CurrentEKSA + " " + sym.Arrow + " " + v.TargetEKSA + "   Kubernetes " + v.CurrentKubernetes + " " + sym.Arrow + " " + v.TargetKubernetes, rVersion})
	add(seg{"The upgrade lock is taken and a snapshot saved first;", rMuted})
	add(seg{"then the EKS-A controller rolls the cluster while the dashboard follows.", rMuted})
	if len(d.plan.Skipped) > 0 {
		add(seg{"Skipped checks (recorded): " + strings.Join(d.plan.Skipped, ", "), rSevWarning})
	}
	add()
	lines = append(lines, dryRunLines(st, d.dry, 6, iw)...)
	if len(d.dry.Conflicts) > 0 {
		box := "[ ]"
		if d.force {
			box = "[x]"
		}
		add()
		add(seg{box + " take over the conflicting fields (recorded in the audit log)", rBold})
	}
	add()
	add(seg{"type the cluster name (" + d.cluster + ") to confirm:", rText})
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		st.paintSegs(&b, l.segs, iw)
	}
	b.WriteByte('\n')
	b.WriteString(d.input.View())
	b.WriteByte('\n')
	st.paintSegs(&b, d.hint, iw)
	b.WriteByte('\n')
	keys := "enter apply · esc cancel"
	if len(d.dry.Conflicts) > 0 {
		keys = "enter apply · tab take over fields · esc cancel"
	}
	st.paintSegs(&b, []seg{{keys, rMuted}}, iw)
	return st.th.Dialog.Render(b.String())
}
