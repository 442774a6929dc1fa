// Command custodian-hook is `custodian hook claude` in a small binary: the
// same decision (package hook/claude) without the rest of the custodian
// linked in, so that Claude Code's every Write, Edit and Bash call pays a
// process start of about a millisecond instead of the full binary's ~10 ms
// of package initialisation. Install it from a clone (or, once the module
// is published, with github.com/custodian-dev/custodian/cmd/custodian-hook@latest)
//
//	go install ./cmd/custodian-hook
//	custodian hook install --claude --binary "$(command -v custodian-hook)"
//
// It takes the same arguments as the full command (`hook claude`, -C DIR),
// and answers the same bytes.
package main

import (
	"fmt"
	"os"

	"github.com/custodian-dev/custodian/hook/claude"
)

func main() {
	dir := ""
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-C" || a == "--dir":
			if i+1 >= len(args) {
				fmt.Fprintln(os.Stderr, "custodian-hook: -C needs a directory")
				os.Exit(2)
			}
			dir = args[i+1]
			i++
		case len(a) > 6 && a[:6] == "--dir=":
			dir = a[6:]
		case a == "hook" || a == "claude":
		default:
			fmt.Fprintf(os.Stderr, "custodian-hook: unknown argument %q (usage: custodian-hook [hook claude] [-C DIR] < input.json)\n", a)
			os.Exit(2)
		}
	}
	os.Exit(claude.Run(dir, os.Stdin, os.Stdout, os.Stderr))
}
