package cmdutil

// Flags and arguments: parsing and checking the command line.

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// Required is a usage error when the flag --name was not given a value.
func Required(name, value string) error {
	if strings.TrimSpace(value) == "" {
		return reason.Usage("--%s is required", name)
	}
	return nil
}

// RequiredFlags is Required for each of cmd's flags names, in order.
func RequiredFlags(cmd *cobra.Command, names ...string) error {
	for _, n := range names {
		if err := Required(n, cmd.Flags().Lookup(n).Value.String()); err != nil {
			return err
		}
	}
	return nil
}

// ParseScore parses --score: a number in [0, 1].
func ParseScore(s string) (float64, error) {
	if s == "" {
		return 0, reason.Usage("--score is required")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, reason.New(reason.InvalidInput, "score %q is not a number", s)
	}
	return v, nil
}

// OptInt returns a pointer to v when the flag was given.
func OptInt(cmd *cobra.Command, name string, v int) *int {
	if !cmd.Flags().Changed(name) {
		return nil
	}
	return &v
}

// Actor returns who this process acts as: --actor, $CUSTODIAN_ACTOR, or the
// OS user name.
func Actor(flag string) string {
	if flag != "" {
		return flag
	}
	if a := os.Getenv("CUSTODIAN_ACTOR"); a != "" {
		return a
	}
	if u := os.Getenv("USER"); u != "" {
		return "user:" + u
	}
	return "user"
}

// ParseRev parses a revision number given on the command line.
func ParseRev(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, reason.Usage("revision %q is not a number", s)
	}
	return n, nil
}

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

func (v *EnumValue) Type() string { return "string" }

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

// ParseInts parses a comma-separated list of positive integers ("1,16,64").
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, reason.Usage("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseSizes parses a comma-separated list of sizes in bytes, with an
// optional KB or MB suffix ("64KB,1MB").
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		mult := 1
		switch {
		case strings.HasSuffix(f, "MB"):
			mult, f = 1<<20, strings.TrimSuffix(f, "MB")
		case strings.HasSuffix(f, "KB"):
			mult, f = 1<<10, strings.TrimSuffix(f, "KB")
		case strings.HasSuffix(f, "B"):
			f = strings.TrimSuffix(f, "B")
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, reason.Usage("%q is not a size (like 10KB or 1MB)", f)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

// ExactArgs and RangeArgs check the number of arguments, as usage errors
// (exit 2).
func ExactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return reason.Usage("%s takes %d argument(s), got %d (usage: %s)", cmd.CommandPath(), n, len(args), cmd.UseLine())
		}
		return nil
	}
}

// RangeArgs accepts lo to hi arguments (a usage error otherwise).
func RangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return reason.Usage("%s takes %d to %d arguments, got %d (usage: %s)", cmd.CommandPath(), lo, hi, len(args), cmd.UseLine())
		}
		return nil
	}
}

// MarkRequired makes flags required, checked before the command runs and
// reported as a usage error (exit 2).
func MarkRequired(cmd *cobra.Command, names ...string) {
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		for _, n := range names {
			if !cmd.Flags().Changed(n) {
				return reason.Usage("%s needs --%s (usage: %s)", cmd.CommandPath(), n, cmd.UseLine())
			}
		}
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
}
