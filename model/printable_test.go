package model

import "testing"

func TestPrintableEscapesControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "",
		"Etcd is not ready":                 "Etcd is not ready",
		"line one\nline two\tcol":           "line one\nline two\tcol",
		"ok\r\x1b[2Klock: no holder\x1b[8m": `ok\r\x1b[2Klock: no holder\x1b[8m`,
		"\x1b]0;pwned\x07title":             `\x1b]0;pwned\atitle`,
		"c1 \u009b31m csi":                  `c1 \u009b31m csi`,
		"ünïcode ✓ stays":                   "ünïcode ✓ stays",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
