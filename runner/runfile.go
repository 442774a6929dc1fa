package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/reason"
)

// RunDir holds the runner's files, relative to the project root: the
// context packets and logs of each run, the run file and its lock.
const RunDir = ".asdd/runs"

// RunFile is .asdd/runs/runner.json: the running runner's pid and the
// agent processes it has started and not yet reaped. It is removed when
// the runner ends; finding it with the lock free means the runner died
// (crash, SIGKILL), and `custodian run --resume` kills the process groups
// it lists before it goes on.
type RunFile struct {
	PID     int       `json:"pid"`
	RunID   string    `json:"run_id"`
	Started string    `json:"started"`
	Procs   []RunProc `json:"procs"`
}

// RunProc is one agent process of a run.
type RunProc struct {
	Slice   string `json:"slice"`
	Agent   string `json:"agent"`
	Task    string `json:"task,omitempty"`
	Attempt int    `json:"attempt"`
	PGID    int    `json:"pgid"`
	Started string `json:"started"`
	Log     string `json:"log,omitempty"`
}

// runLock is a held runner lock and its run file.
type runLock struct {
	dir  string
	lock *flock.Flock
	mu   sync.Mutex
	file RunFile
}

// acquireRun takes the project's runner lock. A run file left by a dead
// runner is refused unless resume is set, in which case the process groups
// it lists are killed first; prev is that file (nil if none).
func acquireRun(root, runID string, now time.Time, resume bool) (rl *runLock, prev *RunFile, killed []RunProc, err error) {
	dir := filepath.Join(root, filepath.FromSlash(RunDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("runner: %w", err)
	}
	lk := flock.New(filepath.Join(dir, "runner.lock"))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("runner: lock: %w", err)
	}
	prev, rerr := readRunFile(dir)
	if !ok {
		holder := "another process"
		if prev != nil {
			holder = fmt.Sprintf("pid %d (started %s)", prev.PID, prev.Started)
		}
		return nil, nil, nil, reason.New(reason.Conflict, "another `custodian run` is running in this project: %s", holder)
	}
	if rerr != nil {
		lk.Unlock()
		return nil, nil, nil, rerr
	}
	if prev != nil {
		if !resume {
			lk.Unlock()
			return nil, nil, nil, reason.New(reason.Conflict,
				"a previous run (pid %d, started %s) ended without finishing, with %s registered: `custodian run --resume` kills what is left of them and continues from the manifest",
				prev.PID, prev.Started, countOf(len(prev.Procs), "agent process", "agent processes")).With("pid", prev.PID)
		}
		for _, p := range prev.Procs {
			if p.PGID > 0 && p.PGID != os.Getpid() {
				_ = killGroup(p.PGID)
				killed = append(killed, p)
			}
		}
	}
	rl = &runLock{dir: dir, lock: lk, file: RunFile{PID: os.Getpid(), RunID: runID, Started: now.UTC().Format(time.RFC3339), Procs: []RunProc{}}}
	if err := rl.write(); err != nil {
		lk.Unlock()
		return nil, nil, nil, err
	}
	return rl, prev, killed, nil
}

func readRunFile(dir string) (*RunFile, error) {
	b, err := os.ReadFile(filepath.Join(dir, "runner.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	var f RunFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, reason.New(reason.CorruptState, "%s/runner.json does not parse (%v): remove it if no runner is running", RunDir, err)
	}
	return &f, nil
}

// write replaces the run file (temp file and rename: a reader never sees
// half of it).
func (rl *runLock) write() error {
	b, err := json.MarshalIndent(rl.file, "", "  ")
	if err != nil {
		return err
	}
	// Durable (temp file, fsync, rename, directory fsync): after a crash
	// of the machine, --resume must still find the process groups to kill.
	if err := atomicfile.WriteIn(rl.dir, "runner.json", append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return nil
}

func (rl *runLock) add(p RunProc) error {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.file.Procs = append(rl.file.Procs, p)
	return rl.write()
}

func (rl *runLock) remove(pgid int) error {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for i, p := range rl.file.Procs {
		if p.PGID == pgid {
			rl.file.Procs = append(rl.file.Procs[:i], rl.file.Procs[i+1:]...)
			break
		}
	}
	return rl.write()
}

// release removes the run file and frees the lock: the run ended.
func (rl *runLock) release() error {
	err := os.Remove(filepath.Join(rl.dir, "runner.json"))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if uerr := rl.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// countOf is "1 agent process", "2 agent processes".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
