//go:build unix

package runner

import (
	"errors"
	"os/exec"
	"syscall"
)

func setGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) error {
	if pgid <= 0 {
		return nil
	}
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// gatedScript waits for the runner's go-ahead on fd 3 (a line; the end of
// the pipe without one means the runner is gone: exit 125 without running
// anything), closes it, and becomes the agent's command (same pid, so the
// process group the runner recorded is the agent's).
const gatedScript = `IFS= read -r _ <&3 || exit 125
exec 3<&-
exec "$@"`

// gatedCommand runs path args behind the gate.
func gatedCommand(path string, args []string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", gatedScript, "custodian-agent", path}, args...)...)
}
