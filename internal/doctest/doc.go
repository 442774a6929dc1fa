// Package doctest runs the shell examples of README.md and docs/*.md
// against the custodian binary, so that a document that drifts from the
// binary fails the tests (go test ./internal/doctest).
//
// # What runs
//
// Every fenced block tagged sh or console. The files run one after the
// other, each in a scratch project of its own (a fresh directory with a git
// repository, $HOME and $TMPDIR of its own, the freshly built custodian
// first on $PATH, no $CUSTODIAN_* variables); the blocks of one file run in order in the same project, so an
// example may build on the ones above it.
//
//   - ```sh: the block is one bash script (-e, -o pipefail) and must exit 0.
//   - ```console: lines starting with "$ " are commands (a trailing "\"
//     continues one), the lines after each are its expected output
//     (stdout and stderr). "…" matches any text within a line, a line of
//     only "…" any number of lines; trailing spaces are ignored. A line
//     "[exit N]" after the output expects that exit status (default 0).
//
// Every fenced block must name its language (sh, console, text, json,
// yaml, …): a bare ``` is reported, and so is a command in an indented
// (unfenced) code block, so that a shell example cannot escape the test by
// omission.
//
// # Directives
//
// An HTML comment on the line just before the fence changes how a block
// runs; several may be given, separated by ";" (skip last: its reason is
// the rest of the comment):
//
//	<!-- doctest: skip REASON -->    do not run it (say why; use sparingly)
//	<!-- doctest: daemon -->         run it while `custodian serve` runs in the
//	                                 project (on a free port, which replaces
//	                                 127.0.0.1:7420 in the example), with its
//	                                 admin token in $CUSTODIAN_ADMIN_TOKEN
//	<!-- doctest: etcd -->           run it with an etcd server (Debian's etcd,
//	                                 started once per file on free ports, which
//	                                 replace the 10.0.0.x:2379 members in the
//	                                 example); without etcd the block is
//	                                 skipped, except in CI ($CI set)
//	<!-- doctest: long-running -->   each line starts a server: it must still be
//	                                 running after 2 s (then it is stopped)
//	<!-- doctest: exit N -->         an sh block that must exit N
//	<!-- doctest: timeout 2m -->     more than the default 60 s
package doctest
