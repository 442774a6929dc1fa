package asdd

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// exactTotal is the float64 nearest to the exact sum of xs, computed with
// big.Float at a precision that holds any sum of float64s.
func exactTotal(xs []float64) float64 {
	sum := new(big.Float).SetPrec(4096)
	for _, x := range xs {
		sum.Add(sum, new(big.Float).SetPrec(4096).SetFloat64(x))
	}
	v, _ := sum.Float64()
	return v
}

func sumOf(xs []float64) *ccsSum {
	var c ccsSum
	for _, x := range xs {
		c.add(&Slice{Status: Spec, CCS: &x}, 1)
	}
	return &c
}

// The global score's sum is exact: for any finite values (scores, tiny
// subnormals, huge and negative ones), its total is the correctly rounded
// sum whatever the order of the values, removing values gives exactly the
// sum of those left, and for two values it is float64 addition (so the
// scores of manifests with one or two active slices are what summing them
// in order gave).
func TestCCSSumExact(t *testing.T) {
	anyFloat := rapid.Custom(func(t *rapid.T) float64 {
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			return rapid.Float64Range(0, 1).Draw(t, "unit")
		case 1:
			return math.Float64frombits(rapid.Uint64Range(0, 1<<52).Draw(t, "subnormal"))
		default:
			f := rapid.Float64().Draw(t, "any")
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return 0.5
			}
			return f
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(anyFloat, 0, 40).Draw(t, "values")
		c := sumOf(xs)
		if got, want := c.total(), exactTotal(xs); got != want && !(got == 0 && want == 0) {
			t.Fatalf("total %v, exact %v", got, want)
		}
		perm := rapid.Permutation(xs).Draw(t, "order")
		if *sumOf(perm) != *c {
			t.Fatal("the sum depends on the order of the values")
		}
		k := rapid.IntRange(0, len(xs)).Draw(t, "removed")
		for _, x := range perm[:k] {
			c.add(&Slice{Status: Spec, CCS: &x}, -1)
		}
		if *c != *sumOf(perm[k:]) {
			t.Fatalf("removing %d values does not leave the sum of the others", k)
		}
		if len(xs) == 2 && !math.IsInf(xs[0]+xs[1], 0) {
			if got := sumOf(xs).total(); got != xs[0]+xs[1] && !(got == 0 && xs[0]+xs[1] == 0) {
				t.Fatalf("two values: total %v, float64 sum %v", got, xs[0]+xs[1])
			}
		}
	})
}

// Infinities and NaNs (never in a valid manifest) give what float64
// addition gives; inactive slices and slices without a CCS add nothing.
func TestCCSSumSpecial(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.5, inf}, inf},
		{[]float64{-inf, 0.5}, -inf},
		{[]float64{inf, -inf}, nan},
		{[]float64{nan, 0.5}, nan},
		{[]float64{math.MaxFloat64, math.MaxFloat64}, inf},
		{[]float64{math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64}, math.MaxFloat64},
		{[]float64{0.1, 0.2, 0.3}, exactTotal([]float64{0.1, 0.2, 0.3})},
	} {
		got := sumOf(tc.xs).total()
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("total of %v = %v, want %v", tc.xs, got, tc.want)
		}
	}
	var c ccsSum
	one := 1.0
	c.add(&Slice{Status: Done, CCS: &one}, 1)
	c.add(&Slice{Status: QuickFix, CCS: &one}, 1)
	c.add(&Slice{Status: Spec}, 1)
	c.add(nil, 1)
	if _, ok := c.mean(); ok || c != (ccsSum{}) {
		t.Fatalf("inactive slices or slices without a CCS were counted: %+v", c)
	}
}
