package schema

import (
	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// NewCmd returns `custodian schema`.
func NewCmd(app *cmdutil.App) *cobra.Command {
	return &cobra.Command{
		Use:       "schema [asdd]",
		Short:     "Print the JSON Schema of a state document (asdd: .asdd/state/manifest.json)",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"asdd"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] != "asdd" {
				return reason.Usage("unknown schema %q (known: asdd)", args[0])
			}
			_, err := app.Out.Write(asdd.Schema)
			return err
		},
	}
}
