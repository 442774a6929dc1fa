// Package integrity holds the commands that check and restore the state: check
// (artifacts against the manifest), verify (journals against snapshots),
// repair, rebuild and review.
package integrity
