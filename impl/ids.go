package impl

import (
	"regexp"
	"sync"

	"github.com/custodian-dev/custodian/reason"
)

// IDPattern is what a new task id must match: a letter or digit, then
// letters, digits, '.', '_' and '-', 128 characters at most (TASK-001,
// 1.2). Such an id cannot forge a line or a field of the script's
// "id|phase|status|description" output. Manifests written before the check
// may hold other ids; they load, and are printed with control characters
// escaped.
const IDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`

var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(IDPattern) })

// CheckID refuses a task id that does not match IDPattern, with
// INVALID_INPUT.
func CheckID(id string) error {
	if idRE().MatchString(id) {
		return nil
	}
	return reason.New(reason.InvalidInput, "task id %q is not valid: letters, digits, '.', '_' and '-' (at most 128, starting with a letter or digit)", id)
}
