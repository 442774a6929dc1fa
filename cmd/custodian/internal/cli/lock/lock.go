package lock

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// LockOptions is what `custodian lock` was asked to do.
type LockOptions struct {
	App    *cmdutil.App
	Slice  string
	Holder string
	TTL    time.Duration // 0: the config's lock.default_ttl
	Reason string
}

// NewLockCmd returns `custodian lock`; it parses the command line into
// LockOptions and calls runF with them (runLock when runF is nil).
func NewLockCmd(app *cmdutil.App, runF func(context.Context, *LockOptions) error) *cobra.Command {
	opts := &LockOptions{App: app}
	cmd := &cobra.Command{
		Use:   "lock SLICE --holder H [--ttl 10m]",
		Short: "Lease a slice: until it expires only the holder may change it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Slice = args[0]
			if err := cmdutil.Required("holder", opts.Holder); err != nil {
				return err
			}
			return cmdutil.Run(app, cmd, opts, runF, runLock)
		},
	}
	cmd.Flags().StringVar(&opts.Holder, "holder", "", "who takes the lease (an agent)")
	cmd.Flags().DurationVar(&opts.TTL, "ttl", 0, "lease duration (default: lock.default_ttl of the config)")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why")
	return cmd
}

// runLock proposes the lease.
func runLock(ctx context.Context, opts *LockOptions) error {
	return cmdutil.Apply(ctx, opts.App, asdd.LockSlice{Slice: opts.Slice, Holder: opts.Holder, TTL: opts.TTL, Reason: opts.Reason})
}

// UnlockOptions is what `custodian unlock` was asked to do.
type UnlockOptions struct {
	App    *cmdutil.App
	Slice  string
	Holder string
	Force  bool   // break someone else's lease
	Role   string // who forces it
}

// NewUnlockCmd returns `custodian unlock`; it parses the command line into
// UnlockOptions and calls runF with them (runUnlock when runF is nil).
func NewUnlockCmd(app *cmdutil.App, runF func(context.Context, *UnlockOptions) error) *cobra.Command {
	opts := &UnlockOptions{App: app}
	cmd := &cobra.Command{
		Use:   "unlock SLICE --holder H | --force --role R",
		Short: "Release a slice's lease (its holder, or a role forcing it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Slice = args[0]
			if !opts.Force {
				if err := cmdutil.Required("holder", opts.Holder); err != nil {
					return err
				}
			}
			return cmdutil.Run(app, cmd, opts, runF, runUnlock)
		},
	}
	cmd.Flags().StringVar(&opts.Holder, "holder", "", "the lease holder")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "break someone else's lease (needs --role)")
	cmd.Flags().StringVar(&opts.Role, "role", "", "the role forcing the unlock")
	return cmd
}

// runUnlock proposes the release.
func runUnlock(ctx context.Context, opts *UnlockOptions) error {
	return cmdutil.Apply(ctx, opts.App, asdd.UnlockSlice{Slice: opts.Slice, Holder: opts.Holder, Force: opts.Force, Role: opts.Role})
}
