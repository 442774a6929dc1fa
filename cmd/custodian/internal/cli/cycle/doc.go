// Package cycle is `custodian cycle`: the parallel dev cycles of seed 003
// (.workflow/.cycle/{cycleId}.json) and their progress files.
package cycle
