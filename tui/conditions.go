package tui

import (
	"strconv"
	"strings"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
)

// healthy reports whether a condition needs no attention.
func healthy(c model.Condition) bool { return report.Healthy(c) }

// conditionLines lists conditions the way clusterctl describe does: the
// healthy ones folded into one line (unless expanded), the others one by one
// with reason, since and, indented below, the message.
func conditionLines(st *styles, cs model.Conditions, expand bool) []line {
	var out []line
	var ok []string
	rolling := cs.IsTrue("RollingOut")
	for _, c := range cs {
		if healthy(c) && !expand {
			ok = append(ok, conditionName(c))
			continue
		}
		out = append(out, conditionLine(st, c, rolling)...)
	}
	if len(ok) > 0 {
		folded := line{segs: []seg{
			{" " + st.th.Sym.OK + " ", rCondTrue},
			{strconv.Itoa(len(ok)) + " healthy: ", rMuted},
			{strings.Join(ok, ", "), rMuted},
		}}
		out = append(out, folded)
	}
	return out
}

// conditionName is how a condition is named beside its mark: one whose
// False is the healthy state (Paused, Deleting, ScalingDown …) reads "not
// Paused", since "✓ Paused" read as "paused: yes".
func conditionName(c model.Condition) string {
	if c.Status == "False" && report.NegativePolarity(c.Type) {
		return "not " + c.Type
	}
	return c.Type
}

// conditionLine is a condition's line (and its message below); rolling
// says the object's rollout is under way (its RollingOut condition is True).
func conditionLine(st *styles, c model.Condition, rolling bool) []line {
	mark := conditionMark(st, c, rolling)
	segs := []seg{{" " + mark.text + " ", mark.r}, {conditionName(c), rText}}
	if c.Reason != "" && c.Reason != c.Type && !healthy(c) { // "● Paused  Paused" said it twice
		segs = append(segs, seg{"  " + c.Reason, rMuted})
	}
	out := []line{{segs: segs, since: c.LastTransitionTime}}
	if c.Message != "" && !healthy(c) {
		r := rMuted
		if c.Severity == model.SeverityError {
			r = rSevError
		}
		out = append(out, messageLines(c.Message, r, "     ")...)
	}
	return out
}

// conditionMark is the mark of a condition. A rollout's conditions go False
// as a matter of course, and are marked as work in progress, not failed:
// the etcdadm controller sets Ready and EtcdMachinesSpecUpToDate False with
// severity Warning and the reason EtcdRollingUpdateInProgress for the whole
// etcd rollout, EKS-A sets its Cluster's with severity Info, and a CAPI
// v1beta2 KubeadmControlPlane (no severities) has MachinesUpToDate False,
// reason NotUpToDate, while RollingOut is True. The failure mark is for
// severity Error and for a reason that names a failure; another Warning
// (MaxNumberOfEtcdMachinesReached) is a warning. A v1beta2 condition has no
// severity to tell: False, it is marked failed unless it is a rollout's.
func conditionMark(st *styles, c model.Condition, rolling bool) seg {
	sym := st.th.Sym
	neg := report.NegativePolarity(c.Type)
	switch {
	case neg && c.Status == "True":
		return seg{sym.Active, rSevInfo}
	case neg && c.Status == "False":
		return seg{sym.OK, rCondTrue}
	case c.Status != "False" || c.Severity == model.SeverityError:
		return st.conditionMark(c)
	case failureReason(c.Reason):
		return seg{sym.Fail, rCondFalse}
	case c.Severity == model.SeverityInfo, strings.HasSuffix(c.Reason, "InProgress"),
		c.Severity == model.SeverityNone && rolling && c.Reason == "NotUpToDate":
		return seg{sym.Active, rSevInfo}
	case c.Severity == model.SeverityWarning:
		return seg{sym.Warn, rSevWarning}
	}
	return st.conditionMark(c)
}

// failureReason reports whether a condition's reason names a failure
// (InPlaceUpgradeFailed, BootstrapFailed, EtcdHealthCheckFailed, …).
func failureReason(reason string) bool {
	return strings.Contains(reason, "Fail") || strings.Contains(reason, "Error")
}

// maxMessageLines caps a multi-line message (v1beta2 aggregates one line per
// machine); the rest is summarised.
const maxMessageLines = 4

// messageLines splits a message into indented lines.
func messageLines(msg string, r role, indent string) []line {
	parts := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	var out []line
	for i, p := range parts {
		if i == maxMessageLines {
			out = append(out, line{segs: []seg{{indent + "… " + strconv.Itoa(len(parts)-i) + " more lines", rMuted}}})
			break
		}
		out = append(out, line{segs: []seg{{indent + strings.TrimSpace(p), r}}})
	}
	return out
}
