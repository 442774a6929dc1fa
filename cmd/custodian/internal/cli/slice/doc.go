// Package slice is `custodian slice`: add, show and list ASDD slices.
package slice
