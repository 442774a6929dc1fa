package cycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// MaxLogRecord bounds one record appended to a coordination log.
const MaxLogRecord = 1 << 20

// LogPath is the project-relative path of cycle id's coordination log
// name, a path inside the cycle's .progress directory ending in .ndjson or
// .jsonl. Anything else is INVALID_INPUT.
func LogPath(id, name string) (string, error) {
	clean := path.Clean(name)
	if name == "" || path.IsAbs(name) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "\\") {
		return "", reason.New(reason.InvalidInput, "log %q: a path inside the cycle's .progress directory", name)
	}
	if !strings.HasSuffix(clean, ".ndjson") && !strings.HasSuffix(clean, ".jsonl") {
		return "", reason.New(reason.InvalidInput, "log %q: an NDJSON log ends in .ndjson or .jsonl", name)
	}
	return ProgressDir(id) + "/" + clean, nil
}

// CompactRecord checks that b is one JSON value (at most MaxLogRecord
// bytes) and returns it compact: one line of a log.
func CompactRecord(b []byte) ([]byte, error) {
	if len(b) > MaxLogRecord {
		return nil, fmt.Errorf("longer than %d bytes", MaxLogRecord)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, bytes.TrimSpace(b)); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if !json.Valid(buf.Bytes()) || buf.Len() == 0 {
		return nil, errors.New("not one JSON value")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, errors.New("not one JSON value")
	}
	return buf.Bytes(), nil
}
