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
