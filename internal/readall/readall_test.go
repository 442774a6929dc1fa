package readall_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/custodian-dev/custodian/internal/readall"
)

func TestSized(t *testing.T) {
	body := strings.Repeat("x", 3000)
	for _, tc := range []struct {
		name        string
		size, limit int64
	}{
		{"exact", 3000, 1 << 20},
		{"unknown", -1, 1 << 20},
		{"announced too small", 10, 1 << 20},
		{"announced too large", 5000, 1 << 20},
		{"over the limit", 3000, 100},
		{"empty announced", 0, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body)), iotest.DataErrReader(strings.NewReader(body))} {
				got, err := readall.Sized(r, tc.size, tc.limit)
				if err != nil || string(got) != body {
					t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(body))
				}
			}
		})
	}
	if got, err := readall.Sized(strings.NewReader(""), 0, 10); err != nil || len(got) != 0 {
		t.Errorf("empty body: %q, %v", got, err)
	}
	boom := errors.New("boom")
	got, err := readall.Sized(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 10, 100)
	if !errors.Is(err, boom) || string(got) != "abc" {
		t.Errorf("failing reader: %q, %v; want abc, boom", got, err)
	}
}

func TestSizedAllocatesOnceForAnnouncedSize(t *testing.T) {
	body := bytes.Repeat([]byte("y"), 2000)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := readall.Sized(bytes.NewReader(body), int64(len(body)), 1<<20); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 { // the buffer, and bytes.Reader's escape
		t.Errorf("%.0f allocations for a body of announced size, want at most 2", allocs)
	}
}
