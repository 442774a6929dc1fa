// Package serve is `custodian serve`: its flags turned into a daemon.Config
// for daemon.Run.
package serve
