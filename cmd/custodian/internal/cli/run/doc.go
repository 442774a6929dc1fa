// Package run is `custodian run`: the runner driving agents through the
// pipeline (package runner).
package run
