package runner

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// ProcSpec is one agent process to start.
type ProcSpec struct {
	Argv   []string
	Dir    string
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
}

// Process is a started agent process.
type Process interface {
	// Pid is the process id (and, for ExecStarter, its process group id).
	Pid() int
	// Wait waits for the process to end and returns its exit code (-1 when
	// it was killed by a signal) or an error if waiting failed.
	Wait() (int, error)
	// Kill kills the process and every process in its group.
	Kill() error
}

// Starter starts agent processes; tests replace it.
type Starter interface {
	Start(ProcSpec) (Process, error)
}

// ExecStarter starts real processes, each in a process group of its own
// (Setpgid) so that a timeout kills the agent and everything it started.
type ExecStarter struct {
	// WaitDelay bounds how long Wait waits for output pipes after the
	// process ended (a grandchild that left the group may hold them).
	WaitDelay time.Duration
}

// Start starts the process, held at a gate: it runs the agent's command
// only once Release is called (after the runner recorded its process
// group in the run file), so a runner killed in between leaves no agent
// that a --resume would not find: the gate's pipe closes with the runner
// and the held process exits without running anything.
func (e ExecStarter) Start(s ProcSpec) (Process, error) {
	target := exec.Command(s.Argv[0], s.Argv[1:]...)
	if target.Err != nil {
		return nil, target.Err
	}
	// What cmd.Start would refuse (a missing or not executable file) is
	// refused here, not by the shell at the gate.
	check := target.Path
	if !filepath.IsAbs(check) && s.Dir != "" {
		check = filepath.Join(s.Dir, check)
	}
	if _, err := exec.LookPath(check); err != nil {
		return nil, err
	}
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer gateR.Close()
	cmd := gatedCommand(target.Path, s.Argv[1:])
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.Dir, s.Env, s.Stdout, s.Stderr
	cmd.ExtraFiles = []*os.File{gateR}
	cmd.WaitDelay = e.WaitDelay
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 2 * time.Second
	}
	setGroup(cmd)
	if err := cmd.Start(); err != nil {
		gateW.Close()
		return nil, err
	}
	return &execProc{cmd: cmd, gate: gateW}, nil
}

// Release lets a process started by ExecStarter run its command.
func (p *execProc) Release() error {
	if p.gate == nil {
		return nil
	}
	_, err := p.gate.Write([]byte("go\n"))
	if cerr := p.gate.Close(); err == nil {
		err = cerr
	}
	p.gate = nil
	return err
}

// Releaser is a Process held until the runner lets it go (ExecStarter's).
type Releaser interface{ Release() error }

type execProc struct {
	cmd  *exec.Cmd
	gate *os.File // the gate's write end until Release
}

func (p *execProc) Pid() int { return p.cmd.Process.Pid }

func (p *execProc) Wait() (int, error) {
	err := p.cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit):
		return exit.ExitCode(), nil
	case errors.Is(err, exec.ErrWaitDelay):
		return p.cmd.ProcessState.ExitCode(), nil
	}
	return -1, err
}

func (p *execProc) Kill() error {
	if p.gate != nil {
		p.gate.Close() // a held process exits without running its command
		p.gate = nil
	}
	return killGroup(p.cmd.Process.Pid)
}
