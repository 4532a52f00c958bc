package upgrade

import (
	"fmt"
	"strings"
)

// DryRunChangedError refuses a start whose dry run, run again under the
// lock just before the writes, no longer says what the operator confirmed:
// another manager changed a field the spec sets while the confirmation was
// open (a GitOps controller, a colleague's kubectl). Forcing conflicts then
// took over fields the operator never saw listed, and the audit log recorded
// the confirmed changes, not the ones made. Nothing is written.
type DryRunChangedError struct {
	// Now is the dry run under the lock, for a new confirmation.
	Now *DryRunResult
	// Differences say what changed, a sentence each.
	Differences []string
}

func (e *DryRunChangedError) Error() string {
	shown := e.Differences
	more := ""
	if len(shown) > 3 {
		more = fmt.Sprintf(" (and %d more)", len(shown)-3)
		shown = shown[:3]
	}
	return "the cluster changed since the dry run that was confirmed, so nothing was applied: " + strings.Join(shown, "; ") + more +
		"\nreview the new dry run and confirm again"
}

// DryRunDifferences says how now differs from the dry run that was
// confirmed: a change, a creation, a refusal or a field conflict that one
// has and the other has not. Empty when they agree.
func DryRunDifferences(confirmed, now *DryRunResult) []string {
	var out []string
	before := map[string]ObjectChange{}
	for _, o := range confirmed.Objects {
		before[o.Object] = o
	}
	seen := map[string]bool{}
	for _, o := range now.Objects {
		seen[o.Object] = true
		b, ok := before[o.Object]
		switch {
		case !ok:
			out = append(out, o.Object+" is now in the spec's dry run")
			continue
		case o.Error != "" && b.Error == "":
			refusal, _, _ := strings.Cut(o.Error, "\n")
			out = append(out, o.Object+" is now refused: "+refusal)
			continue
		case o.Create != b.Create && o.Create:
			out = append(out, o.Object+" no longer exists and would be created")
			continue
		case o.Create != b.Create:
			out = append(out, o.Object+" now exists (it was to be created)")
			continue
		}
		was := map[string]FieldChange{}
		for _, f := range b.Fields {
			was[f.Path] = f
		}
		for _, f := range o.Fields {
			w, ok := was[f.Path]
			delete(was, f.Path)
			if ok && w == f {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s now changes %s", o.Object, f.Path, changeText(f)))
		}
		for _, f := range b.Fields {
			if _, ok := was[f.Path]; ok {
				out = append(out, fmt.Sprintf("%s %s no longer changes (it was %s)", o.Object, f.Path, changeText(f)))
			}
		}
	}
	for _, o := range confirmed.Objects {
		if !seen[o.Object] {
			out = append(out, o.Object+" is no longer in the spec's dry run")
		}
	}
	type key struct{ object, field, manager string }
	had := map[key]bool{}
	for _, c := range confirmed.Conflicts {
		had[key{c.Object, c.Field, c.Manager}] = true
	}
	for _, c := range now.Conflicts {
		if !had[key{c.Object, c.Field, c.Manager}] {
			out = append(out, fmt.Sprintf("%s %s is now owned by another field manager, %s", c.Object, c.Field, c.Manager))
		}
	}
	return out
}

func changeText(f FieldChange) string {
	switch f.Op {
	case "add":
		return "(added: " + f.New + ")"
	case "remove":
		return "(removed: " + f.Old + ")"
	}
	return f.Old + " → " + f.New
}
