package runner

import (
	"errors"
	"io"
	"os/exec"
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

// Start starts the process.
func (e ExecStarter) Start(s ProcSpec) (Process, error) {
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.Dir, s.Env, s.Stdout, s.Stderr
	cmd.WaitDelay = e.WaitDelay
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 2 * time.Second
	}
	setGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &execProc{cmd: cmd}, nil
}

type execProc struct{ cmd *exec.Cmd }

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

func (p *execProc) Kill() error { return killGroup(p.cmd.Process.Pid) }
