package client

import (
	"encoding/json"

	"github.com/custodian-dev/custodian/asdd"
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
	Revision uint64        `json:"revision"`
	Summary  string        `json:"summary"`
	Events   []asdd.Event  `json:"events"`
	Verdict  *reason.Error `json:"verdict,omitempty"`
	Slice    *asdd.Slice   `json:"slice,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	// Effects are the file side effects the operation itself produced
	// (markers, notices, log rows), which the daemon applied.
	Effects []EffectSummary `json:"effects,omitempty"`
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
