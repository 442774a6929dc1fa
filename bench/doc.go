// Package bench measures Custodian against the machine it runs on: every
// figure comes with the bare cost of the same physical work (append+fsync,
// temp+fsync+rename+directory fsync) measured in the same run, so that the
// ratio to the physical limit is visible on noisy machines.
package bench
