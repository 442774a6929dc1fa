package asdd

import (
	"regexp"
	"sync"

	"github.com/custodian-dev/custodian/reason"
)

// IDPattern is what a new slice id or task id must match: a letter or
// digit, then letters, digits, '.', '_' and '-', 128 characters at most.
// Such an id cannot break a line, a Markdown table cell or a terminal:
// it is safe in escalation notices, the failure log and every listing.
// Manifests written before the check may hold other ids; they load and
// are shown with their control characters escaped.
const IDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`

// NamePattern is what a new lock holder must match: an agent or a
// person, in letters (any script), digits, spaces and ". _ @ + -", 128
// characters at most.
const NamePattern = `^[\p{L}\p{N}][\p{L}\p{N} ._@+-]{0,127}$`

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(NamePattern) })

// CheckName refuses a name (what it is, for the message) that does not
// match NamePattern, with INVALID_INPUT.
func CheckName(what, name string) error {
	if nameRE().MatchString(name) {
		return nil
	}
	return reason.New(reason.InvalidInput, "%s %q is not valid: letters, digits, spaces and . _ @ + - (at most 128, starting with a letter or digit)", what, name)
}
