package tui

import (
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// FrameLogEnv names the file the end-to-end benchmark (bench/e2e) reads to
// learn when the console drew what. Unset, the App holds a nil *frameLog and
// every hook is a nil check: the instrumentation costs nothing.
const FrameLogEnv = "UPGRADE_CONSOLE_FRAMELOG"

// frameLog appends one line per frame that matters to the benchmark: the
// first frame, the first frame with every pane synced, and every frame drawn
// from a newer snapshot than the previous one. A line is
//
//	<unix ns> <event> <snapshot version> <max Machine resourceVersion> <synced 0|1> <snapshot taken, unix ns>
//
// with event "first", "synced", "frame", or "same" for a frame from a newer
// snapshot that draws exactly what the previous frame drew (its changes are
// off screen): the renderer then writes nothing, and the benchmark must not
// wait for a write that shows it. The Machine resourceVersion says
// which writes the frame shows: a watch delivers a kind's changes in
// resourceVersion order, so a snapshot holding version r holds every earlier
// write to Machines, and the benchmark's load driver knows the version each
// of its writes got.
type frameLog struct {
	f       *os.File
	first   bool
	synced  bool
	version uint64
	buf     []byte
	// topRV is the highest Machine resourceVersion shown, worked out from
	// the machines that changed since machinesFrom (the log must not cost
	// the console a scan of every machine per frame, or the benchmark
	// measures its own instrument).
	topRV        uint64
	machinesFrom model.List[model.Machine]
	// content is the previous frame: a reference, not a copy.
	content string
}

// openFrameLog opens the file named by FrameLogEnv, or returns nil when it
// is unset or cannot be opened (the console must run regardless).
func openFrameLog() *frameLog {
	f := openLogFile()
	if f == nil {
		return nil
	}
	return &frameLog{f: f}
}

// openLogFile opens the file named by FrameLogEnv for appending, or returns
// nil when it is unset or cannot be opened.
func openLogFile() *os.File {
	path := os.Getenv(FrameLogEnv)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil
	}
	return f
}

// frame notes that the App handed the renderer content, a frame drawn from
// s, the snapshot its top screen's view was built from (nil when that is
// unknown: before any snapshot, or while a rebuild from a newer one is
// pending).
func (l *frameLog) frame(s *model.ClusterState, content string) {
	if l == nil {
		return
	}
	// Every frame, logged or not, is what the screen shows next.
	same := content == l.content
	l.content = content
	if s == nil && l.first {
		return
	}
	var version uint64
	if s != nil {
		version = s.Version
	}
	event := ""
	synced := frameSynced(s)
	switch {
	case !l.first:
		l.first = true
		event = "first"
	case synced && !l.synced:
		event = "synced"
	case version != l.version && same:
		event = "same"
	case version != l.version:
		event = "frame"
	default:
		return
	}
	l.synced = l.synced || synced
	l.version = version
	b := l.buf[:0]
	b = strconv.AppendInt(b, time.Now().UnixNano(), 10)
	b = append(b, ' ')
	b = append(b, event...)
	b = append(b, ' ')
	b = strconv.AppendUint(b, version, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, l.maxMachineRV(s), 10)
	if synced {
		b = append(b, " 1 "...)
	} else {
		b = append(b, " 0 "...)
	}
	var taken int64
	if s != nil && !s.At.IsZero() {
		taken = s.At.UnixNano()
	}
	b = strconv.AppendInt(b, taken, 10)
	b = append(b, '\n')
	l.buf = b
	_, _ = l.f.Write(b)
}

// builtState is the snapshot the top screen's view was built from, or nil
// when the top screen is not the dashboard or has not rebuilt from its
// newest snapshot yet.
func (a *App) builtState() *model.ClusterState {
	if len(a.screens) == 0 {
		return nil
	}
	if d, ok := a.screens[len(a.screens)-1].(*Dashboard); ok && d.state != nil && d.built == d.state.Version {
		return d.state
	}
	return nil
}

// maxMachineRV is the highest Machine resourceVersion any frame has shown:
// a watch delivers a kind's changes in resourceVersion order, so a frame at
// version r shows every write up to r. Only machines that are not the
// objects of the previous list at the same position are read.
func (l *frameLog) maxMachineRV(s *model.ClusterState) uint64 {
	if s == nil || s.Machines.Same(l.machinesFrom) {
		return l.topRV
	}
	prev := l.machinesFrom
	for i, m := range s.Machines.All() {
		if i < prev.Len() && prev.At(i) == m {
			continue
		}
		if rv, err := strconv.ParseUint(m.ResourceVersion, 10, 64); err == nil && rv > l.topRV {
			l.topRV = rv
		}
	}
	l.machinesFrom = s.Machines
	return l.topRV
}

// frameLogKinds are the kinds whose panes must have listed before the
// dashboard counts as synced.
var frameLogKinds = []model.Kind{
	model.KindEKSACluster, model.KindCAPICluster, model.KindKubeadmControlPlane, model.KindEtcdadmCluster,
	model.KindMachineDeployment, model.KindMachine, model.KindNode, model.KindNodeUpgrade,
	model.KindNodeKubeadmUpgrade, model.KindControlPlaneUpgrade, model.KindMachineDeploymentUpgrade, model.KindEvent,
}

func frameSynced(s *model.ClusterState) bool {
	if s == nil {
		return false
	}
	for _, k := range frameLogKinds {
		src, ok := s.Sources[k]
		if !ok || !(src.Synced || src.Forbidden != "" || !src.Installed) {
			return false
		}
	}
	return true
}

// writeLog adds to the frame log one line per write of the renderer to the
// terminal,
//
//	<unix ns> write <bytes>
//
// taken as the write began. With it the benchmark splits a frame's way to
// the screen in two: built → written (Bubble Tea's renderer, which flushes
// on its own ticker) and written → read (the terminal and the benchmark's
// reader of it). The renderer writes from its own goroutine, so the log has
// its own descriptor; O_APPEND keeps each line whole beside the frame
// lines.
type writeLog struct {
	f   *os.File
	mu  sync.Mutex // the renderer's flush and Bubble Tea's own writes (on exit, say) may race
	buf []byte
}

// openWriteLog opens the frame log for the renderer's writes, or returns nil
// when it is off or cannot be opened.
func openWriteLog() *writeLog {
	f := openLogFile()
	if f == nil {
		return nil
	}
	return &writeLog{f: f}
}

// wrote logs a write of n bytes begun at t.
func (l *writeLog) wrote(t time.Time, n int) {
	if l == nil || n == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := strconv.AppendInt(l.buf[:0], t.UnixNano(), 10)
	b = append(b, " write "...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\n')
	l.buf = b
	_, _ = l.f.Write(b)
}
