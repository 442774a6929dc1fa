package lock

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewLockCmd(app *cmdutil.App) *cobra.Command {
	var holder, why string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "lock SLICE --holder H [--ttl 10m]",
		Short: "Lease a slice: until it expires only the holder may change it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Required("holder", holder); err != nil {
				return err
			}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.LockSlice{Slice: args[0], Holder: holder, TTL: ttl, Reason: why})
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&holder, "holder", "", "who takes the lease (an agent)")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "lease duration (default: lock.default_ttl of the config)")
	cmd.Flags().StringVar(&why, "reason", "", "why")
	return cmd
}

func NewUnlockCmd(app *cmdutil.App) *cobra.Command {
	var holder, role string
	var force bool
	cmd := &cobra.Command{
		Use:   "unlock SLICE --holder H | --force --role R",
		Short: "Release a slice's lease (its holder, or a role forcing it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !force {
				if err := cmdutil.Required("holder", holder); err != nil {
					return err
				}
			}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.UnlockSlice{Slice: args[0], Holder: holder, Force: force, Role: role})
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&holder, "holder", "", "the lease holder")
	cmd.Flags().BoolVar(&force, "force", false, "break someone else's lease (needs --role)")
	cmd.Flags().StringVar(&role, "role", "", "the role forcing the unlock")
	return cmd
}
