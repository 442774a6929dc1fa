package reconcile

import (
	"encoding/hex"
	"path"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// CleanPath checks that p names a file inside the project root and returns
// it in clean, slash-separated form. It is purely lexical: symlinks are
// checked when the file is opened through the root. Rejected, as
// INVALID_INPUT: an empty path, a NUL byte, a backslash, an absolute path
// (or a Windows drive), any ".." component (even one that would stay inside),
// and the root itself.
func CleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", reason.New(reason.InvalidInput, "artifact path is empty")
	case strings.IndexByte(p, 0) >= 0:
		return "", reason.New(reason.InvalidInput, "artifact path %q contains a NUL byte", p)
	case strings.IndexByte(p, '\\') >= 0:
		return "", reason.New(reason.InvalidInput, "artifact path %q contains a backslash; paths are slash-separated and relative to the project root", p)
	case strings.HasPrefix(p, "/") || hasDrive(p):
		return "", reason.New(reason.InvalidInput, "artifact path %q is absolute; it must be relative to the project root", p)
	}
	for rest := p; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		if part == ".." {
			return "", reason.New(reason.InvalidInput, "artifact path %q leaves the project root through \"..\"", p)
		}
	}
	c := path.Clean(p)
	if c == "." {
		return "", reason.New(reason.InvalidInput, "artifact path %q names the project root, not a file", p)
	}
	return c, nil
}

func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}

// HashPrefix starts every recorded hash.
const HashPrefix = "sha256:"

// ParseHash checks that h is "sha256:" followed by 64 lowercase hex digits
// and returns the 32 raw bytes.
func ParseHash(h string) ([32]byte, error) {
	var sum [32]byte
	hexPart, ok := strings.CutPrefix(h, HashPrefix)
	if ok && len(hexPart) == 64 {
		for i := range sum {
			hi, ok1 := unhex(hexPart[2*i])
			lo, ok2 := unhex(hexPart[2*i+1])
			if !ok1 || !ok2 {
				ok = false
				break
			}
			sum[i] = hi<<4 | lo
		}
		if ok {
			return sum, nil
		}
	}
	return [32]byte{}, reason.New(reason.InvalidInput, "recorded hash %q is not of the form sha256:<64 lowercase hex digits>", clip(h))
}

// FormatHash renders a raw SHA-256 as "sha256:<hex>".
func FormatHash(sum [32]byte) string { return HashPrefix + hex.EncodeToString(sum[:]) }

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
