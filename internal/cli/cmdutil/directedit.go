package cmdutil

import (
	"io"
	"os"
	"syscall"

	"github.com/custodian-dev/custodian/internal/directedit"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/file"
)

// withDirectEdits sets a file store's direct-edit policy and report for
// the project at root (package directedit); reports go to out.
func withDirectEdits(opts *file.Options, root string, out io.Writer) error {
	return directedit.Configure(opts, root, out)
}

// ReadProjectFile reads a file the custodian owns (the config) without
// ever blocking: a FIFO or a device in its place is INVALID_INPUT at once
// (issue 18 item 12). Errors wrap fs.ErrNotExist when it is missing.
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
