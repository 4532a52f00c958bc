package model

import "strings"

// EventHistoryPerSubject is how many events the node detail reads from the
// API server about each object, the newest: a machine that failed its way
// through a rollout has a few dozen reasons, each counted rather than
// repeated.
const EventHistoryPerSubject = 50

// EventSubject selects the events about one object that the node detail
// reads from the API server: those whose involved object is of Kind and
// named Name (or, with Prefix, named Name or Name-…: a MachineDeployment's
// MachineSets, which CAPI names after it), and, when Naming is set, whose
// message names Naming as a whole word (an owner's events about one of its
// machines).
type EventSubject struct {
	Kind, Name string
	Prefix     bool
	Naming     string
}

// String names the subject's objects: "Machine mgmt-cp-1", or with a
// prefix "MachineSet mgmt-md-0-*".
func (s EventSubject) String() string {
	if s.Prefix {
		return s.Kind + " " + s.Name + "-*"
	}
	return s.Kind + " " + s.Name
}

// Matches reports whether an event's involved object and message are the
// subject's.
func (s EventSubject) Matches(kind, name, message string) bool {
	if kind != s.Kind {
		return false
	}
	if name != s.Name && !(s.Prefix && strings.HasPrefix(name, s.Name+"-")) {
		return false
	}
	return s.Naming == "" || NamesWhole(message, s.Naming)
}

// NamesWhole reports whether text names name as a whole word: not inside a
// longer name that begins or ends with it (mgmt-etcd-h2v8dx is another
// machine than mgmt-etcd-h2v8d). A dot ends the name when no name
// character follows it (the end of a sentence).
func NamesWhole(text, name string) bool {
	if name == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(name)
		before := start == 0 || !nameByte(text[start-1])
		after := end == len(text) || !nameByte(text[end]) ||
			text[end] == '.' && (end+1 == len(text) || !nameByte(text[end+1]))
		if before && after {
			return true
		}
		from = start + 1
	}
}

// nameByte reports whether c can be part of an object's name (a DNS
// subdomain; upper case and _ too, as a generated name's neighbours).
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}
