//go:build !race

package asdd

// maxSteps bounds a property-test sequence.
const maxSteps = 60
