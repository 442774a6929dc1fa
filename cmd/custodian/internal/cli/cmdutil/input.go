package cmdutil

import (
	"io"

	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
)

// MaxInput bounds what a command reads from a file or stdin.
const MaxInput = 16 << 20

// ReadInput reads r, named name in messages (a file, stdin): at most
// MaxInput bytes of text, INVALID_INPUT otherwise.
func ReadInput(r io.Reader, name string) ([]byte, error) {
	if r == nil {
		return nil, reason.New(reason.InvalidInput, "nothing to read on %s", name)
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "cannot read %s: %v", name, err)
	}
	if len(b) > MaxInput {
		return nil, reason.New(reason.InvalidInput, "%s is over the limit of %d bytes", name, MaxInput)
	}
	if err := safetext.CheckString(name, string(b)); err != nil {
		return nil, err
	}
	return b, nil
}
