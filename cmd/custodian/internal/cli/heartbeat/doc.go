// Package heartbeat is `custodian heartbeat`: an agent's heartbeat.
package heartbeat
