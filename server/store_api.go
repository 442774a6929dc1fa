package server

import (
	_ "embed"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

//go:embed openapi.json
var openapiJSON []byte

// OpenAPI returns the API description served at /v1/openapi.json.
func OpenAPI() []byte { return openapiJSON }

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openapiJSON)
}

// keys lists the documents; ?verify=true lists what a verification of
// every document checks (app.Reader.VerifyKeys).
func (s *Server) keys(w http.ResponseWriter, r *http.Request) {
	var keys []string
	var err error
	switch v := r.URL.Query().Get("verify"); v {
	case "", "false":
		keys, err = s.app.Keys(r.Context())
	case "true":
		keys, _, err = s.app.VerifyKeys(r.Context())
	default:
		err = reason.New(reason.InvalidInput, "verify=%q: want true or false", v)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if keys == nil {
		keys = []string{}
	}
	writeJSON(w, http.StatusOK, wire.KeysResponse{Keys: keys})
}

func uintParam(r *http.Request, name string) (uint64, bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, reason.New(reason.InvalidInput, "%s=%q is not a revision number", name, v)
	}
	return n, true, nil
}

func (s *Server) getDoc(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if err := s.documentKey(key); err != nil {
		writeError(w, err)
		return
	}
	rev, at, err := uintParam(r, "rev")
	if err != nil {
		writeError(w, err)
		return
	}
	start := time.Now()
	var doc store.Document
	if at {
		doc, err = s.app.DocAt(r.Context(), key, rev)
	} else if doc, err = s.app.Doc(r.Context(), key); err == nil && !doc.Exists() {
		err = app.NoDocument(key)
	}
	if err == nil {
		doc.Value, err = doc.Bytes() // made from the model the daemon holds, if need be
	}
	s.m.reads.Observe(time.Since(start).Seconds())
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("ETag", strconv.Quote(strconv.FormatUint(doc.Revision, 10)))
	writeJSON(w, http.StatusOK, doc)
}

// ifMatch parses If-Match: a revision number, quoted or not.
func ifMatch(r *http.Request) (uint64, bool, error) {
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(strings.Trim(v, `"`), 10, 64)
	if err != nil {
		return 0, false, reason.New(reason.InvalidInput, "If-Match %q is not a revision number", v)
	}
	return n, true, nil
}

func (s *Server) putDoc(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if err := s.documentKey(key); err != nil {
		writeError(w, err)
		return
	}
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req wire.PutRequest
	if err := decodeStrict(body, &req); err != nil {
		writeError(w, err)
		return
	}
	base, cas, err := ifMatch(r)
	if err != nil {
		writeError(w, err)
		return
	}
	put := app.PutDocument{Key: key, PutRequest: req}
	if cas {
		put.IfRevision = &base
	}
	if c := r.URL.Query().Get("create"); c == "1" || c == "true" {
		put.Create = true
	}
	// The application layer commits it, checking the document's own rules.
	start := time.Now()
	res, err := s.app.Put(r.Context(), put)
	s.observeOp(start, res != nil && res.Changed, err)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("ETag", strconv.Quote(strconv.FormatUint(res.Revision, 10)))
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if err := s.documentKey(key); err != nil {
		writeError(w, err)
		return
	}
	from, _, err := uintParam(r, "from")
	if err != nil {
		writeError(w, err)
		return
	}
	to, _, err := uintParam(r, "to")
	if err != nil {
		writeError(w, err)
		return
	}
	recs, err := s.app.History(r.Context(), key, from, to)
	if err != nil {
		writeError(w, err)
		return
	}
	if recs == nil {
		recs = []store.Record{}
	}
	writeJSON(w, http.StatusOK, wire.HistoryResponse{Records: recs})
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if _, err := s.app.Verify(r.Context(), key); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.VerifyResponse{Key: key, OK: true})
}

func (s *Server) documentKey(key string) error {
	if s.o.Documents == nil {
		return nil
	}
	return s.o.Documents(key)
}
