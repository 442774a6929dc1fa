//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package effects

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// A FIFO named as an artifact (or swapped in for one) is refused at once,
// never waited on.
func TestArtifactFIFORefused(t *testing.T) {
	p, dir := open(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { _, err := p.Artifact("spec", "pipe.md", asdd.DefaultMarker); done <- err }()
	go func() { _, err := p.Hash("pipe.md"); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if reason.CodeOf(err) != reason.InvalidInput {
				t.Errorf("%v, want INVALID_INPUT", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("blocked on a FIFO")
		}
	}
}
