package cycle

import (
	"regexp"
	"sync"

	"github.com/custodian-dev/custodian/reason"
)

// TaskIDPattern is what a new plan task id must match, and NamePattern a
// new change's agent: a letter or digit, then letters, digits, '.', '_'
// and '-', 128 characters at most. Cycle ids follow CheckID. Documents
// written before the check may hold other ids; they load, and are printed
// with control characters escaped.
const TaskIDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`

var taskIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(TaskIDPattern) })

// checkIdent refuses an identifier (what it is, for the message) that does
// not match TaskIDPattern, with INVALID_INPUT.
func checkIdent(what, id string) error {
	if taskIDRE().MatchString(id) {
		return nil
	}
	return reason.New(reason.InvalidInput, "%s %q is not valid: letters, digits, '.', '_' and '-' (at most 128, starting with a letter or digit)", what, id)
}
