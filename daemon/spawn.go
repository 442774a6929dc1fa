package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Inside the agent's OS sandbox the CLI cannot write the state files, so
// its changes go to the daemon over the unix socket. The daemon must then
// be running, and be started OUTSIDE the sandbox (a process started inside
// it could not write either): Claude Code's SessionStart hook, which runs
// outside the sandbox, starts it (EnsureRunning), the way ssh-agent is
// started with the session rather than by its clients.

// Answers reports whether a daemon answers its health check on the unix
// socket at sock.
func Answers(ctx context.Context, sock string) bool {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://unix/v1/health", nil)
	if err != nil {
		return false
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// EnsureRunning makes sure a daemon answers on the socket sock: at once
// when one does; else it starts cmd (a `custodian serve` for the project)
// detached from the caller (a session of its own, no stdin, its output
// appended to logPath) and waits until a daemon answers. Two callers at
// once may both start one: the first to take the project's state lock
// serves, the other finds the lock held and exits with nothing changed,
// and both callers see the winner answer. started reports that this
// call's daemon is the one serving.
func EnsureRunning(ctx context.Context, sock string, cmd *exec.Cmd, logPath string) (started bool, err error) {
	if Answers(ctx, sock) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return false, fmt.Errorf("start the daemon: %w", err)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return false, fmt.Errorf("start the daemon: %w", err)
	}
	defer logf.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("start the daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(8 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var exitErr error
	for {
		if Answers(ctx, sock) {
			return exited != nil && exitErr == nil, nil
		}
		select {
		case exitErr = <-exited:
			// Ours stopped: another daemon holds the lock (it
			// answers soon), or ours could not start.
			exited = nil
			if exitErr == nil {
				exitErr = errors.New("exited")
			}
		case <-tick.C:
		case <-deadline.C:
			if exitErr != nil {
				return false, fmt.Errorf("the daemon did not start (%v): see %s", exitErr, logPath)
			}
			return false, fmt.Errorf("the daemon does not answer on %s: see %s", sock, logPath)
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}
