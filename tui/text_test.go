package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/themes"
)

// TestWrapWordsKeepsACommandWhole: wrapping breaks at spaces, never wider
// than asked, loses no word, and keeps a `quoted` command on one line when
// it fits there (a command split across lines is copied half).
func TestWrapWordsKeepsACommandWhole(t *testing.T) {
	const cmd = "`upgrade-console lock clear paused --cluster mgmt`"
	text := "etcd rolled back; EKS-A reconcile paused (upgrade-console etcd rollback): resume with " + cmd + " after fixing the cause"
	for w := width(cmd); w <= 160; w++ {
		rows := wrapWords(text, w)
		whole := false
		for _, r := range rows {
			if width(r) > w {
				t.Fatalf("w=%d: row %q is %d cells", w, r, width(r))
			}
			whole = whole || strings.Contains(r, cmd)
		}
		if !whole {
			t.Errorf("w=%d: the command is split: %q", w, rows)
		}
		if got := strings.Join(rows, " "); got != text {
			t.Errorf("w=%d: rows read %q", w, got)
		}
	}
	// Narrower than the command: it breaks at its spaces, and a word wider
	// than a row is cut.
	for _, w := range []int{8, 20, width(cmd) - 1} {
		rows := wrapWords(text, w)
		for _, r := range rows {
			if width(r) > w {
				t.Fatalf("w=%d: row %q is %d cells", w, r, width(r))
			}
		}
		if got := strings.ReplaceAll(strings.Join(rows, ""), " ", ""); got != strings.ReplaceAll(text, " ", "") {
			t.Errorf("w=%d: rows lose text: %q", w, rows)
		}
	}
	if got := wrapWords("a `b\nc` d", 80); len(got) != 1 || got[0] != "a `b c` d" {
		t.Errorf("a line break in a quoted span: %q", got)
	}
}

// TestWrapBreaksOnlyAtSpaces: wrap keeps hyphenated names whole (ansi.Wrap,
// which it used, broke "upgrade-console-mgmt" after "upgrade-") and never
// returns no line.
func TestWrapBreaksOnlyAtSpaces(t *testing.T) {
	text := "stale upgrade lock: Lease eksa-system/upgrade-console-mgmt held by ops@bastion-1"
	for w := len("eksa-system/upgrade-console-mgmt"); w <= 90; w++ {
		rows := wrap(text, w)
		if strings.Join(rows, " ") != text {
			t.Errorf("w=%d: rows %q", w, rows)
		}
	}
	if got := wrap("", 10); len(got) != 1 || got[0] != "" {
		t.Errorf("wrap of nothing = %q, want one empty line", got)
	}
}

// A version cut to its column keeps both ends: the release and the build
// tell two versions apart.
func TestFitMiddle(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"v1.15.14-eksa.10", 15, "v1.15.1…eksa.10"},
		{"v1.30.5-eks-1-30-22", 15, "v1.30.5…1-30-22"},
		{"v0.1.27", 10, "v0.1.27   "},
		{"v0.21.2+d05f3a8", 15, "v0.21.2+d05f3a8"},
	} {
		if got := fitMiddle(c.in, c.w); got != c.want || width(got) != c.w {
			t.Errorf("fitMiddle(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
	// Not plain ASCII (a version from a hand-edited Bundles): cut by
	// width, never inside a rune.
	for _, in := range []string{"v1.15.14-éksa.10-ü", "v1.30.5-日本語-1-30-22"} {
		for w := 5; w <= 16; w++ {
			if got := fitMiddle(in, w); !utf8.ValidString(got) || width(got) != w {
				t.Errorf("fitMiddle(%q, %d) = %q (valid %v, width %d)", in, w, got, utf8.ValidString(got), width(got))
			}
		}
	}
}

// TestFitNamesKeepsCutNamesApart: names cut to the same text lose what they
// share at the start instead; others are cut as fit cuts them.
func TestFitNamesKeepsCutNamesApart(t *testing.T) {
	names := []string{"cilium", "bottlerocket admin image", "bottlerocket ctrl image", "etcdadm-bootstrap", "etcdadm-controller", "in-place upgrader image"}
	got := fitNames(names, 12)
	want := []string{"cilium      ", "…admin image", "…ctrl image ", "etcdadm-boo…", "etcdadm-con…", "in-place up…"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q at 12: %q, want %q", names[i], got[i], want[i])
		}
	}
	// Wide enough, nothing changes.
	for i, g := range fitNames(names, 30) {
		if strings.TrimRight(g, " ") != names[i] {
			t.Errorf("%q at 30: %q", names[i], g)
		}
	}
	// A name the other starts with keeps fit's cut.
	if got := fitNames([]string{"kubernetes", "kubernetes (EKS-D)"}, 6); got[0] != "kuber…" || got[1] != "kuber…" {
		t.Errorf("prefix names: %q", got)
	}
}

// TestPaintSegsSaysWhatItCut: a line cut at the edge ends in "…", also when a
// segment ends exactly there and only the ones after it are left out; trailing
// blank segments are not a cut.
func TestPaintSegsSaysWhatItCut(t *testing.T) {
	mono := themes.NewMono()
	st := newStyles(&mono)
	paint := func(ss []seg, w int) string {
		var b strings.Builder
		st.paintSegs(&b, ss, w)
		return ansi.Strip(b.String())
	}
	line := []seg{{"running v1.30.5 ×2", rText}, {", v1.31.3", rText}}
	for _, tc := range []struct {
		w    int
		want string
	}{
		{27, "running v1.30.5 ×2, v1.31.3"},
		{30, "running v1.30.5 ×2, v1.31.3   "},
		{18, "running v1.30.5 ×…"},
		{20, "running v1.30.5 ×2,…"},
		{1, "…"},
	} {
		if got := paint(line, tc.w); got != tc.want {
			t.Errorf("at %d: %q, want %q", tc.w, got, tc.want)
		}
	}
	if got := paint([]seg{{"abc", rText}, {"   ", rText}}, 3); got != "abc" {
		t.Errorf("blank tail: %q", got)
	}
}
