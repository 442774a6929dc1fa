// Package version is `custodian version` and the --version flag.
package version
