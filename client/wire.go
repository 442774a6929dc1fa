package client

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/jsonenc"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// The JSON bodies of the API, shared by this client and package server.

// PutRequest is the body of PUT /v1/doc?key=K: a whole value, or an RFC
// 6902 patch from the revision named by If-Match.
type PutRequest struct {
	Value  json.RawMessage `json:"value,omitempty"`
	Patch  json.RawMessage `json:"patch,omitempty"`
	Actor  string          `json:"actor,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Events []store.Event   `json:"events,omitempty"`
}

// PutResponse is the result of a PUT.
type PutResponse struct {
	store.Document
	Changed bool          `json:"changed"`
	Record  *store.Record `json:"record,omitempty"`
}

// KeysResponse lists documents.
type KeysResponse struct {
	Keys []string `json:"keys"`
}

// HistoryResponse lists journal records.
type HistoryResponse struct {
	Records []store.Record `json:"records"`
}

// VerifyResponse is a successful verification.
type VerifyResponse struct {
	Key string `json:"key"`
	OK  bool   `json:"ok"`
}

// OpResponse is the result of an ASDD operation run by the daemon.
type OpResponse struct {
	Revision uint64 `json:"revision"`
	// Committed is true: an operation the daemon answers with a response
	// was committed (a rejection is an error body, committed false).
	Committed bool `json:"committed"`
	// Outcome is "accepted" or "halted" (a committed halt: see Verdict).
	Outcome  string        `json:"outcome"`
	Summary  string        `json:"summary"`
	Events   []asdd.Event  `json:"events"`
	Verdict  *reason.Error `json:"verdict,omitempty"`
	Slice    *asdd.Slice   `json:"slice,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	// Effects are the file side effects the operation itself produced
	// (markers, notices, log rows), which the daemon applied.
	Effects []EffectSummary `json:"effects,omitempty"`
}

// MarshalJSON encodes the response as encoding/json encodes the struct,
// with the events and the common fields written without reflection (the
// daemon answers every operation with one).
func (r OpResponse) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 256), nil)
}

// AppendJSON appends the response as MarshalJSON encodes it. events, when
// not nil, are r.Events already encoded by their MarshalJSON, one each
// (the daemon encoded them for the journal), and are used as they are.
func (r OpResponse) AppendJSON(b []byte, events []json.RawMessage) ([]byte, error) {
	if events != nil && len(events) != len(r.Events) {
		return nil, fmt.Errorf("encode response: %d encoded events for %d", len(events), len(r.Events))
	}
	b = strconv.AppendUint(append(b, `{"revision":`...), r.Revision, 10)
	b = strconv.AppendBool(append(b, `,"committed":`...), r.Committed)
	b = jsonenc.String(append(b, `,"outcome":`...), r.Outcome)
	b = jsonenc.String(append(b, `,"summary":`...), r.Summary)
	b = append(b, `,"events":`...)
	if r.Events == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range r.Events {
			if i > 0 {
				b = append(b, ',')
			}
			if events != nil {
				b = append(b, events[i]...)
				continue
			}
			eb, err := e.MarshalJSON()
			if err != nil {
				return nil, err
			}
			b = append(b, eb...)
		}
		b = append(b, ']')
	}
	var err error
	if r.Verdict != nil {
		if b, err = jsonenc.Value(append(b, `,"verdict":`...), r.Verdict); err != nil {
			return nil, err
		}
	}
	if r.Slice != nil {
		if b, err = jsonenc.Value(append(b, `,"slice":`...), r.Slice); err != nil {
			return nil, err
		}
	}
	if len(r.Warnings) > 0 {
		b = append(b, `,"warnings":[`...)
		for i, w := range r.Warnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.String(b, w)
		}
		b = append(b, ']')
	}
	if len(r.Effects) > 0 {
		b = append(b, `,"effects":[`...)
		for i, e := range r.Effects {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.String(append(b, `{"kind":`...), e.Kind)
			b = jsonenc.String(append(b, `,"path":`...), e.Path)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// EffectSummary names one file side effect of an operation.
type EffectSummary struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// ErrorResponse is the body of every error.
type ErrorResponse struct {
	Error *reason.Error `json:"error"`
}

// encodeOp encodes an operation's request body as json.Marshal does; a
// heartbeat (the most frequent request) without reflection (FuzzEncodeOp).
func encodeOp(op asdd.Op) ([]byte, error) {
	b, ok := op.(asdd.Beat)
	if !ok {
		return json.Marshal(op)
	}
	buf := append(make([]byte, 0, 128), '{')
	buf = jsonenc.String(jsonenc.Member(buf, true, "Agent"), b.Agent)
	buf = jsonenc.String(jsonenc.Member(buf, false, "Status"), b.Status)
	buf = jsonenc.String(jsonenc.Member(buf, false, "Slice"), b.Slice)
	for _, m := range [...]struct {
		name string
		n    *int
	}{{"Wave", b.Wave}, {"Completed", b.Completed}, {"Remaining", b.Remaining}} {
		buf = jsonenc.Member(buf, false, m.name)
		if m.n == nil {
			buf = append(buf, "null"...)
		} else {
			buf = strconv.AppendInt(buf, int64(*m.n), 10)
		}
	}
	return append(buf, '}'), nil
}
