// Package lock is `custodian lock` and `custodian unlock`: a slice's lease.
package lock
