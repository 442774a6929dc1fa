package jsonval

// CanonicalSum is the canonical sum of a decoded tree.
func CanonicalSum(tree any) (string, error) { return canonicalSum(tree) }
