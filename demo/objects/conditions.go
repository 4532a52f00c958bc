package objects

import (
	"sort"
	"time"
)

// Two condition dialects live in the demo world (facts §7.5): the EKS-A
// Cluster, EtcdadmCluster and NodeUpgrade use CAPI v1beta1 conditions
// (severity when False, no observedGeneration), the CAPI v1beta2 objects use
// metav1.Condition (reason and message required, observedGeneration).

// Time formats a time as the API stores metav1.Time.
func Time(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// V1beta1 is a CAPI v1beta1 condition. Severity, reason and message are
// dropped when the condition is True, as CAPI's MarkTrue writes it.
func V1beta1(typ string, status bool, severity, reason, message string, at time.Time) map[string]any {
	c := map[string]any{"type": typ, "status": boolStatus(status), "lastTransitionTime": Time(at)}
	if status {
		return c
	}
	if severity != "" {
		c["severity"] = severity
	}
	if reason != "" {
		c["reason"] = reason
	}
	if message != "" {
		c["message"] = message
	}
	return c
}

// V1beta2 is a metav1.Condition.
func V1beta2(typ string, status bool, reason, message string, generation int64, at time.Time) map[string]any {
	return map[string]any{
		"type":               typ,
		"status":             boolStatus(status),
		"reason":             reason,
		"message":            message,
		"observedGeneration": generation,
		"lastTransitionTime": Time(at),
	}
}

func boolStatus(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// SetCondition puts c into list, replacing the condition of the same type.
// The previous lastTransitionTime is kept when the status did not change, as
// both CAPI condition helpers do.
func SetCondition(list []any, c map[string]any) []any {
	for i, old := range list {
		om, ok := old.(map[string]any)
		if !ok || om["type"] != c["type"] {
			continue
		}
		if om["status"] == c["status"] {
			c["lastTransitionTime"] = om["lastTransitionTime"]
		}
		out := append([]any{}, list...)
		out[i] = c
		return out
	}
	return append(append([]any{}, list...), c)
}

// SortV1beta1 orders v1beta1 conditions as CAPI's conditions.Set does: Ready
// first, then by type.
func SortV1beta1(list []any) []any {
	out := append([]any{}, list...)
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := out[i].(map[string]any)["type"].(string)
		b, _ := out[j].(map[string]any)["type"].(string)
		if a == "Ready" || b == "Ready" {
			return a == "Ready" && b != "Ready"
		}
		return a < b
	})
	return out
}

// Condition finds a condition by type in an object's status.conditions.
func Condition(obj map[string]any, typ string) (map[string]any, bool) {
	st, _ := obj["status"].(map[string]any)
	list, _ := st["conditions"].([]any)
	for _, c := range list {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m, true
		}
	}
	return nil, false
}

// IsTrue reports whether an object's condition of the given type is True.
func IsTrue(obj map[string]any, typ string) bool {
	c, ok := Condition(obj, typ)
	return ok && c["status"] == "True"
}

// V1beta2Setter returns a function that sets a metav1 condition in *conds:
// True with okReason, or False with notReason; msg either way (the callers
// decide which state carries a message: RollingOut=True does).
func V1beta2Setter(conds *[]any, generation int64, now time.Time) func(typ string, ok bool, okReason, notReason, msg string) {
	return func(typ string, ok bool, okReason, notReason, msg string) {
		reason := okReason
		if !ok {
			reason = notReason
		}
		*conds = SetCondition(*conds, V1beta2(typ, ok, reason, msg, generation, now))
	}
}
