//go:build unix

package reconcile

import (
	"crypto/sha256"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckFIFOIsNotAFile(t *testing.T) {
	p := newProject(t)
	if err := syscall.Mkfifo(p.path("pipe.md"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	rep := p.check([]Artifact{{Slice: "S-1", Name: "intent", Path: "pipe.md", Hash: FormatHash(sha256.Sum256(nil))}}, Options{})
	if diff := cmp.Diff([]string{"S-1 intent STATE_INCONSISTENCY"}, codes(rep)); diff != "" {
		t.Fatal(diff)
	}
}
