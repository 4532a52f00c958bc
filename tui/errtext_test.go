package tui

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestErrTextIsPrintable(t *testing.T) {
	got := errText(errors.New("dry run: admission webhook \"x\" denied: \x1b]0;pwned\x07\x1b[2Kok\nnext"))
	if want := "dry run: admission webhook \"x\" denied: \\x1b]0;pwned\\a\\x1b[2Kok\nnext"; got != want {
		t.Errorf("errText = %q, want %q", got, want)
	}
}

// Every error the screens show goes through errText: an error's text
// quotes the API server or a file, and a raw .Error() put it on the screen
// unescaped.
func TestScreensShowErrorsThroughErrText(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	raw := regexp.MustCompile(`\.Error\(\)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if raw.MatchString(line) && !strings.Contains(line, "func errText(") {
				t.Errorf("%s:%d: %s (use errText)", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
