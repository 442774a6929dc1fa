package server

import (
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

func tokenOK(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = wire.Encode(w, v)
}

// ErrorBody is the JSON of every error response.
type ErrorBody = wire.ErrorBody

func errorBody(e *reason.Error, coded bool) ErrorBody {
	if coded {
		return ErrorBody{Error: e, Outcome: wire.Rejected}
	}
	return ErrorBody{Error: e, Outcome: wire.Failed}
}

// StatusOf is the HTTP status of an error response with this code.
func StatusOf(code reason.Code) int {
	switch code {
	case reason.InvalidInput:
		return http.StatusBadRequest
	case reason.NotFound:
		return http.StatusNotFound
	case reason.Conflict:
		return http.StatusConflict
	case reason.SliceLocked:
		return http.StatusLocked
	case reason.CorruptState:
		return http.StatusInternalServerError
	case reason.Unauthorized:
		return http.StatusUnauthorized
	case "", "INTERNAL":
		return http.StatusInternalServerError
	}
	return http.StatusUnprocessableEntity // a rule said no
}

func writeError(w http.ResponseWriter, err error) {
	e, ok := reason.As(err)
	if !ok {
		e = &reason.Error{Code: "INTERNAL", Message: err.Error()}
	}
	writeJSON(w, StatusOf(e.Code), errorBody(e, ok))
}

func writeErrorStatus(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody(&reason.Error{Code: reason.Code(code), Message: msg}, true))
}

// readBody reads a JSON request body within the size and depth caps.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, reason.New(reason.InvalidInput, "request body over the limit of %d bytes", s.o.MaxBodyBytes)
		}
		return nil, reason.New(reason.InvalidInput, "read request body: %v", err)
	}
	if err := safetext.CheckJSON("request body", body); err != nil {
		return nil, err
	}
	if d, err := store.Depth(body); err != nil {
		return nil, reason.New(reason.InvalidInput, "malformed JSON: unbalanced brackets")
	} else if d > s.o.MaxDepth {
		return nil, reason.New(reason.InvalidInput, "JSON nested %d levels deep, over the limit of %d", d, s.o.MaxDepth)
	}
	return body, nil
}

// decodeStrict decodes JSON into v, refusing invalid UTF-8, unknown
// fields and trailing data.
func decodeStrict(body []byte, v any) error { return wire.DecodeStrict(body, v) }
