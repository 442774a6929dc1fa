package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The demo's closing hints name a command the user can run: custodian when
// PATH finds this very binary, its path otherwise, and after `go run` (a
// binary in go's temporary build directory, gone when the demo ends) how
// to install one.
func TestDemoCommandName(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "custodian")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if name, note := commandName(bin); name != "custodian" || note != "" {
		t.Errorf("on PATH: %q %q", name, note)
	}
	other := filepath.Join(t.TempDir(), "my custodian")
	if name, _ := commandName(other); name != "'"+other+"'" {
		t.Errorf("elsewhere: %q", name)
	}
	t.Setenv("PATH", t.TempDir())
	name, note := commandName("/tmp/go-build1234/b001/exe/custodian")
	clone, module := strings.Index(note, "go install ./cmd/custodian"), strings.Index(note, "go install github.com/custodian-dev/custodian/cmd/custodian@latest")
	if name != "custodian" || clone < 0 || module < clone || !strings.Contains(note, "go run ./cmd/custodian") {
		t.Errorf("after go run: %q %q", name, note)
	}
}
