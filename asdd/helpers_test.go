package asdd

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

var fixedNow = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)

// h is a fake content hash for a name.
func h(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func art(name, path string) Artifact {
	return Artifact{Name: name, Path: path, SHA256: h(path), MarkedSHA256: h("marked " + path)}
}
