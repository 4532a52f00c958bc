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
		"admin\u202e@host":                  `admin\u202e@host`,
		"a\u200bb \u2066x\u2069 \u2028":     `a\u200bb \u2066x\u2069 \u2028`,
		"first line\r\nsecond line\r\n":     "first line\nsecond line\n",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrintableLineEscapesLineBreaksToo(t *testing.T) {
	if got, want := PrintableLine("v1.2.3\nfail   forged\tx\x1b[2K"), `v1.2.3\nfail   forged\tx\x1b[2K`; got != want {
		t.Errorf("PrintableLine = %q, want %q", got, want)
	}
	if got := PrintableLine("v1.14.12-eksa.1"); got != "v1.14.12-eksa.1" {
		t.Errorf("a version: %q", got)
	}
}

func TestFoldLines(t *testing.T) {
	for in, want := range map[string]string{
		"disk full":                         "disk full",
		"disk full\r\nforged\nforged too\n": "disk full (+2 lines)",
		"":                                  "",
	} {
		if got := FoldLines(in); got != want {
			t.Errorf("FoldLines(%q) = %q, want %q", in, got, want)
		}
	}
}
