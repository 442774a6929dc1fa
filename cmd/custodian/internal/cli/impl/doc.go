// Package impl is `custodian impl`: the .impl/manifest.json task manifest (the
// drop-in for task-manifest.sh).
package impl
