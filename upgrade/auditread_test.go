package upgrade

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The fix matches the log's refusal: "free space on its disk" was said of
// a directory at the log's path, a read-only file system and an immutable
// file, where the disk had room.
func TestAuditWriteErrorFixMatchesItsCause(t *testing.T) {
	for _, tc := range []struct {
		err       error
		want, not string
	}{
		{syscall.ENOSPC, "free space on its disk", ""},
		{syscall.EISDIR, "move the directory at that path away", "free space"},
		{syscall.EROFS, "mounted read-only", "free space"},
		{syscall.EPERM, "chattr -i", "free space"},
		{syscall.EACCES, "writable for this user", "free space"},
		{syscall.EIO, "check the file and the disk", "free space"},
	} {
		msg := (&AuditWriteError{Path: "/s/audit.log", Err: &os.PathError{Op: "open", Path: "/s/audit.log", Err: tc.err}}).Error()
		if !strings.Contains(msg, tc.want) || (tc.not != "" && strings.Contains(msg, tc.not)) {
			t.Errorf("%v: %q, want %q and not %q", tc.err, msg, tc.want, tc.not)
		}
	}
}

// A line longer than the reader takes is skipped as a line that is no
// entry, and the entries around it are read: bufio.Scanner stopped at it
// ("token too long") and none was shown.
func TestReadAuditSkipsALineTooLongToRead(t *testing.T) {
	entry := `{"time":"2026-11-21T22:47:58Z","user":"u","host":"h","cluster":"mgmt","action":"apply","result":"ok"}` + "\n"
	var b bytes.Buffer
	b.WriteString(entry + entry)
	b.Write(bytes.Repeat([]byte("x"), MaxAuditLine+1))
	b.WriteString("\n" + entry + "{not json}\r\n" + strings.TrimSuffix(entry, "\n"))
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 4 || res.Read != 4 || !equalInts(res.BadLines, []int{3, 5}) || !equalInts(res.LongLines, []int{3}) {
		t.Errorf("entries %d, read %d, bad %v, long %v; want 4, 4, [3 5], [3]", len(res.Entries), res.Read, res.BadLines, res.LongLines)
	}
}

// A directory at the log's path is said as such, with the fix: reading it
// said "audit log line 1: read …: is a directory".
func TestReadAuditOfADirectorySaysSo(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadAudit(dir, AuditFilter{})
	if err == nil || !strings.Contains(err.Error(), "is a directory, not the log") || strings.Contains(err.Error(), "line 1") {
		t.Errorf("ReadAudit(a directory): %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A last line without its newline that begins as an entry does, or is cut
// before that, was torn as it was written: Torn names it, so that a log
// whose only line it is reads as a torn log. Text of another kind, and a
// bad line that ends with a newline, are not torn.
func TestReadAuditNamesATornLastLine(t *testing.T) {
	entry := `{"time":"2026-11-21T22:47:58Z","user":"u","host":"h","cluster":"mgmt","action":"apply","result":"ok"}`
	for _, c := range []struct {
		name, text string
		torn, read int
	}{
		{"one line torn mid-entry", entry[:50], 1, 0},
		{"one line torn in its first key", entry[:4], 1, 0},
		{"the last of two torn", entry + "\n" + entry[:50], 2, 1},
		{"one line torn after its key's first letter", entry[:3], 1, 0},
		{"a lone brace", "{", 0, 0},
		{"a brace and a quote", `{"`, 0, 0},
		{"other text", "hello", 0, 0},
		{"other JSON", `{"a":1}`, 0, 0},
		{"a bad line with its newline", entry[:50] + "\n", 0, 0},
		{"whole", entry + "\n", 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), AuditFileName)
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := ReadAudit(path, AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Torn != c.torn || res.Read != c.read {
				t.Errorf("torn %d, read %d; want %d, %d (bad lines %v)", res.Torn, res.Read, c.torn, c.read, res.BadLines)
			}
		})
	}
}
