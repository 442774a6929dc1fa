package jsonval

// Limits bound what a document may be.
type Limits struct {
	MaxBytes int // 0: DefaultMaxBytes
	MaxDepth int // 0: DefaultMaxDepth
}

// Defaults for Limits.
const (
	DefaultMaxBytes = 64 << 20
	DefaultMaxDepth = 64
)

func (l Limits) maxBytes() int {
	if l.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return l.MaxBytes
}

func (l Limits) maxDepth() int {
	if l.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return l.MaxDepth
}
