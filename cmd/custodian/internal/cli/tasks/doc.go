// Package tasks is `custodian tasks`: a slice's plan, tasks in waves with
// dependencies.
package tasks
