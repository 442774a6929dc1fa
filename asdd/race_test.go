//go:build race

package asdd

// maxSteps bounds a property-test sequence; the race detector makes each
// step ~10× slower, so sequences are shorter under -race.
const maxSteps = 15
