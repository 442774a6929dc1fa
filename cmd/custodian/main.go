// Command custodian is the keeper of a multi-agent pipeline's state.
package main

import (
	"os"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
