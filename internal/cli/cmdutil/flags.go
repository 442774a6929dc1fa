package cmdutil

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// EnumValue is a string flag that takes one of a fixed set of values. A
// value is matched without regard to case and stored in its canonical
// spelling; anything else is rejected while the flags are parsed, before
// the command runs (INVALID_INPUT, exit 2, naming the allowed values).
type EnumValue struct {
	p       *string
	Allowed []string
}

// errNotAllowed is the cause pflag wraps when a value is not in the set.
type errNotAllowed struct{ allowed []string }

func (e *errNotAllowed) Error() string {
	return "allowed values are " + strings.Join(e.allowed, ", ")
}

func (v *EnumValue) String() string { return *v.p }
func (v *EnumValue) Type() string   { return "string" }

func (v *EnumValue) Set(s string) error {
	for _, a := range v.Allowed {
		if strings.EqualFold(s, a) {
			*v.p = a
			return nil
		}
	}
	return &errNotAllowed{v.Allowed}
}

// EnumFlag defines --name on fs, stored in p, default def ("" for none),
// taking only one of allowed; the usage line lists them and shell
// completion offers them. Every flag with a fixed set of values is defined
// through it.
func EnumFlag(cmd *cobra.Command, fs *pflag.FlagSet, p *string, name, def string, allowed []string, usage string) {
	*p = def
	fs.Var(&EnumValue{p: p, Allowed: allowed}, name, fmt.Sprintf("%s: %s", usage, strings.Join(allowed, ", ")))
	_ = cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return slices.Clone(allowed), cobra.ShellCompDirectiveNoFileComp
	})
}

// FlagError turns a flag parsing error into the error the command returns:
// a value outside an enumerated flag's set is INVALID_INPUT naming the flag
// and the allowed values; anything else is a usage error.
func FlagError(c *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	var na *errNotAllowed
	if errors.As(err, &inv) && errors.As(err, &na) {
		return reason.New(reason.InvalidInput, "%s %q is not valid: %s", "--"+inv.GetFlag().Name, inv.GetValue(), na.Error())
	}
	return &reason.UsageError{Err: err}
}

// SliceStatuses is every status a slice may have, lifecycle first.
func SliceStatuses() []string {
	return append(slices.Clone(asdd.Lifecycle), asdd.Blocked, asdd.Partial, asdd.QuickFix, asdd.BehaviorCapture, asdd.NeedsHumanReview)
}
