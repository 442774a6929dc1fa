package file

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

// readSized reads everything whatever the size stat gave: the file may
// have grown or shrunk since, or stat may say 0 (a file in /proc).
func TestReadSized(t *testing.T) {
	content := strings.Repeat("0123456789", 1000)
	for _, size := range []int64{0, 1, 511, 512, 9999, 10000, 10001, 1 << 20, -1} {
		got, err := readSized(strings.NewReader(content), size)
		if err != nil || string(got) != content {
			t.Fatalf("size %d: %d bytes (%v), want %d", size, len(got), err, len(content))
		}
		got, err = readSized(iotest.HalfReader(strings.NewReader(content)), size)
		if err != nil || string(got) != content {
			t.Fatalf("half reads, size %d: %d bytes (%v)", size, len(got), err)
		}
	}
	if got, err := readSized(bytes.NewReader(nil), 100); err != nil || len(got) != 0 {
		t.Fatalf("empty: %q (%v)", got, err)
	}
	if _, err := readSized(iotest.TimeoutReader(strings.NewReader(content)), 10); err == nil {
		t.Fatal("a read error is not returned")
	}
}
