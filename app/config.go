package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// ReadConfig reads .asdd/config.yaml under root; a missing file means the
// defaults of seed 004. It is the one reader of the ASDD configuration:
// the CLI's, Local's by default, and the daemon's (which reads it again
// when the file changes). It never blocks: a FIFO or a device in the
// file's place is INVALID_INPUT at once.
func ReadConfig(root string) (*asdd.Config, error) {
	b, err := ReadProjectFile(filepath.Join(root, filepath.FromSlash(asdd.ConfigPath)))
	if errors.Is(err, fs.ErrNotExist) {
		return asdd.DefaultConfig(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", asdd.ConfigPath, err)
	}
	return asdd.ParseConfig(b)
}

// ReadProjectFile reads a file the custodian owns (the configuration)
// without ever blocking: a FIFO or a device in its place is INVALID_INPUT
// at once. Errors wrap fs.ErrNotExist when it is missing.
func ReadProjectFile(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, reason.New(reason.InvalidInput, "%s is not a regular file (%s)", name, fi.Mode().Type())
	}
	return io.ReadAll(io.LimitReader(f, 16<<20))
}
