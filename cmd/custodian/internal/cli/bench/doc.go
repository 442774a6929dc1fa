// Package bench is `custodian bench`: the file store, the daemon and the MCP
// door measured against this machine's bare disk costs.
package bench
