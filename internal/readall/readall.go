// Package readall reads a whole message body into one buffer of its
// announced size. io.ReadAll starts at 512 bytes and grows, which on the
// daemon's hot path (requests and responses of a few hundred bytes to a
// few KB) was several allocations and copies per message.
package readall

import (
	"errors"
	"io"
)

// Sized reads r to its end, as io.ReadAll does, starting with room for
// size bytes when 0 <= size <= limit (an HTTP Content-Length; -1 when
// unknown), so that a body of the announced length is read into one
// buffer. A size over limit is not trusted for the allocation; the reader
// (http.MaxBytesReader) still enforces its own limit.
func Sized(r io.Reader, size, limit int64) ([]byte, error) {
	c := 512
	if size >= 0 && size <= limit {
		c = int(size) + 1 // room for the read that finds the end
	}
	b := make([]byte, 0, c)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
	}
}
