//go:build !unix

package runner

import (
	"os"
	"os/exec"
)

func setGroup(*exec.Cmd) {}

// killGroup kills the process (no process groups here).
func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

// gatedCommand runs path args directly: there is no POSIX shell to hold
// the process at the gate (Release only closes the pipe).
func gatedCommand(path string, args []string) *exec.Cmd {
	return exec.Command(path, args...)
}
