// Package wire holds the daemon API's request and response bodies, its
// error body and its table of operations: the one definition package
// server answers with and package client decodes. It has no behaviour
// beyond encoding: what an operation does is the application layer's
// (package app).
package wire

import (
	"bytes"
	"encoding/json"
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

// asddOps are the ASDD operations by name (POST /v1/asdd/{op}): the
// domain's list (asdd.Ops), each named by itself (Op.OpName).
var asddOps = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, op := range asdd.Ops() {
		m[op.OpName()] = reflect.TypeOf(op)
	}
	return m
}()

// ASDDOpType is the Go type of the body of ASDD operation name (one of the
// asdd.Op types), for documentation generated from it.
func ASDDOpType(name string) (reflect.Type, bool) {
	typ, ok := asddOps[name]
	return typ, ok
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

// ASDDOpName is the operation name of op; false for an operation the
// daemon does not run.
func ASDDOpName(op asdd.Op) (string, bool) {
	name := op.OpName()
	_, ok := asddOps[name]
	return name, ok
}

// DecodeASDDOp decodes the body of POST /v1/asdd/{name}.
func DecodeASDDOp(name string, body []byte) (asdd.Op, error) {
	typ, ok := asddOps[name]
	if !ok {
		return nil, reason.New(reason.NotFound, "no ASDD operation %q (operations: %s)", name, joinNames(ASDDOps()))
	}
	p := reflect.New(typ)
	if err := decodeOp(body, p.Interface()); err != nil {
		return nil, err
	}
	return p.Elem().Interface().(asdd.Op), nil
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
