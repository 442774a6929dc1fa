// Package wire holds the daemon API's request and response bodies, its
// error body and its table of operations: the one definition package
// server answers with and package client decodes. It has no behaviour
// beyond encoding: what an operation does is the application layer's
// (package app).
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// DefaultSocket is the unix socket the daemon API is served on, relative
// to the project root: where custodian serve listens and where a client
// of the project looks for it.
const DefaultSocket = ".asdd/state/custodian.sock"

// PutRequest is the body of PUT /v1/doc?key=K (a human action: it needs
// the admin token where one is set): a whole value, or an RFC 6902 patch
// from the revision named by If-Match.
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

// RollbackRequest is the body of POST /v1/rollback (a human action: it
// needs the admin token where one is set): restore Key's value at revision
// To as a new commit.
type RollbackRequest struct {
	Key    string `json:"key"`
	To     uint64 `json:"to"`
	Reason string `json:"reason"`
	Actor  string `json:"actor,omitempty"`
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

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error *reason.Error `json:"error"`
	// Committed is always false: an error response changed nothing.
	Committed bool `json:"committed"`
	// Outcome is Rejected when a rule or an input check refused the
	// request (the error has a reason code), Failed otherwise.
	Outcome string `json:"outcome"`
}

// Outcome values of OpResponse.Outcome: whether the operation changed
// state.
const (
	// Accepted: the operation was committed as asked.
	Accepted = "accepted"
	// Halted: a rule halted the slice; the halt was committed (state
	// changed) and Verdict says why.
	Halted = "halted"
	// Unchanged: the operation was valid and changed nothing.
	Unchanged = "unchanged"
	// Rejected (an ErrorBody's outcome): refused by a rule or an input
	// check; nothing changed.
	Rejected = "rejected"
	// Failed (an ErrorBody's outcome): an error without a reason code;
	// nothing was committed.
	Failed = "error"
)

// OpResponse is the result of an ASDD operation.
type OpResponse struct {
	Revision uint64 `json:"revision"`
	// Committed reports whether state changed (a halt is committed too).
	// A rejected operation is an error response, never an OpResponse.
	Committed bool          `json:"committed"`
	Outcome   string        `json:"outcome"`
	Summary   string        `json:"summary"`
	Events    []asdd.Event  `json:"events"`
	Verdict   *reason.Error `json:"verdict,omitempty"`
	Slice     *asdd.Slice   `json:"slice,omitempty"`
	Warnings  []string      `json:"warnings,omitempty"`
	// Effects are the file side effects the operation produced (markers,
	// notices, log rows), applied where the state is kept.
	Effects []EffectSummary `json:"effects,omitempty"`
}

// EffectSummary names one file side effect of an operation.
type EffectSummary struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// ASDD operation names (POST /v1/asdd/{op}) and their types.
var asddOps = map[string]func() asdd.Op{
	"init":               func() asdd.Op { return new(asdd.Init) },
	"add-slice":          func() asdd.Op { return new(asdd.AddSlice) },
	"quick":              func() asdd.Op { return new(asdd.Quick) },
	"lock":               func() asdd.Op { return new(asdd.LockSlice) },
	"unlock":             func() asdd.Op { return new(asdd.UnlockSlice) },
	"heartbeat":          func() asdd.Op { return new(asdd.Beat) },
	"propose":            func() asdd.Op { return new(asdd.Proposal) },
	"resolve":            func() asdd.Op { return new(asdd.Resolve) },
	"approve":            func() asdd.Op { return new(asdd.Approve) },
	"add-task":           func() asdd.Op { return new(asdd.AddTask) },
	"complete-task":      func() asdd.Op { return new(asdd.CompleteTask) },
	"claim-task":         func() asdd.Op { return new(asdd.ClaimTask) },
	"clear-review":       func() asdd.Op { return new(asdd.ClearReview) },
	"correct-assumption": func() asdd.Op { return new(asdd.CorrectAssumption) },
	"halt":               func() asdd.Op { return new(asdd.ReportFailure) },
	"flag-drift":         func() asdd.Op { return new(asdd.FlagDrift) },
	"agent-timeout":      func() asdd.Op { return new(asdd.AgentTimeout) },
	"clear-markers":      func() asdd.Op { return new(asdd.ClearMarkers) },
	"attach-branch":      func() asdd.Op { return new(asdd.AttachBranch) },
}

// ASDDOpType is the Go type of the body of ASDD operation name (one of the
// asdd.Op types), for documentation generated from it.
func ASDDOpType(name string) (reflect.Type, bool) {
	mk, ok := asddOps[name]
	if !ok {
		return nil, false
	}
	return reflect.TypeOf(mk()).Elem(), true
}

// ASDDOps lists the ASDD operation names, sorted.
func ASDDOps() []string {
	names := make([]string, 0, len(asddOps))
	for n := range asddOps {
		names = append(names, n)
	}
	sortStrings(names)
	return names
}

func sortStrings(s []string) { sort.Strings(s) }

// ASDDOpName is the operation name of op.
func ASDDOpName(op asdd.Op) (string, bool) {
	switch op.(type) {
	case asdd.Init:
		return "init", true
	case asdd.AddSlice:
		return "add-slice", true
	case asdd.Quick:
		return "quick", true
	case asdd.LockSlice:
		return "lock", true
	case asdd.UnlockSlice:
		return "unlock", true
	case asdd.Beat:
		return "heartbeat", true
	case asdd.Proposal:
		return "propose", true
	case asdd.Resolve:
		return "resolve", true
	case asdd.Approve:
		return "approve", true
	case asdd.AddTask:
		return "add-task", true
	case asdd.CompleteTask:
		return "complete-task", true
	case asdd.ClaimTask:
		return "claim-task", true
	case asdd.ClearReview:
		return "clear-review", true
	case asdd.CorrectAssumption:
		return "correct-assumption", true
	case asdd.ReportFailure:
		return "halt", true
	case asdd.FlagDrift:
		return "flag-drift", true
	case asdd.AgentTimeout:
		return "agent-timeout", true
	case asdd.ClearMarkers:
		return "clear-markers", true
	case asdd.AttachBranch:
		return "attach-branch", true
	}
	return "", false
}

// DecodeASDDOp decodes the body of POST /v1/asdd/{name}.
func DecodeASDDOp(name string, body []byte) (asdd.Op, error) {
	mk, ok := asddOps[name]
	if !ok {
		return nil, reason.New(reason.NotFound, "no ASDD operation %q (operations: %s)", name, joinNames(ASDDOps()))
	}
	p := mk()
	if err := decodeOp(body, p); err != nil {
		return nil, err
	}
	return derefOp(p), nil
}

// derefOp turns the *T DecodeASDDOp decoded into the T the rules take.
func derefOp(p asdd.Op) asdd.Op {
	switch o := p.(type) {
	case *asdd.Init:
		return *o
	case *asdd.AddSlice:
		return *o
	case *asdd.Quick:
		return *o
	case *asdd.LockSlice:
		return *o
	case *asdd.UnlockSlice:
		return *o
	case *asdd.Beat:
		return *o
	case *asdd.Proposal:
		return *o
	case *asdd.Resolve:
		return *o
	case *asdd.Approve:
		return *o
	case *asdd.AddTask:
		return *o
	case *asdd.CompleteTask:
		return *o
	case *asdd.ClaimTask:
		return *o
	case *asdd.ClearReview:
		return *o
	case *asdd.CorrectAssumption:
		return *o
	case *asdd.ReportFailure:
		return *o
	case *asdd.FlagDrift:
		return *o
	case *asdd.AgentTimeout:
		return *o
	case *asdd.ClearMarkers:
		return *o
	case *asdd.AttachBranch:
		return *o
	}
	panic(fmt.Sprintf("wire: no value type for %T", p))
}

func joinNames(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// DecodeStrict decodes one JSON value into v, refusing what DESIGN.md §6
// refuses: invalid UTF-8, duplicate member names, unknown members and
// trailing data (INVALID_INPUT). Member names match fields in any case, as
// encoding/json matches them.
func DecodeStrict(body []byte, v any) error {
	if err := jsonv2.Unmarshal(body, v, strict); err != nil {
		return reason.New(reason.InvalidInput, "malformed request: %v", err)
	}
	return nil
}

// Decode decodes one JSON value into v with encoding/json's semantics:
// how a client reads the daemon's responses (which may carry members a
// newer daemon added).
func Decode(data []byte, v any) error { return jsonv2.Unmarshal(data, v, lenient) }

// DecodeRead is Decode of everything r reads.
func DecodeRead(r io.Reader, v any) error { return jsonv2.UnmarshalRead(r, v, lenient) }

// lenient is encoding/json's semantics.
var lenient = jsonv1.DefaultOptionsV1()

// Encode writes v as encoding/json's Encoder writes it with HTML escaping
// off (the bytes, then a newline; invalid UTF-8 becomes U+FFFD written as
// it is, not escaped), through go-json-experiment/json: a type with a
// MarshalJSONTo method (a manifest slice) is written by it, not encoded
// and then scanned again.
func Encode(w io.Writer, v any) error {
	b, err := jsonv2.Marshal(v, encodeOpts)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

var encodeOpts = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false))

// strict is encoding/json's semantics (the types were written for it),
// without what it lets through.
var strict = jsonv2.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsonv2.RejectUnknownMembers(true),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
)
