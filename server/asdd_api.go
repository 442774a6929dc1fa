package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/wire"
)

// ASDDOps lists the operation names the daemon runs (POST /v1/asdd/{op}).
func ASDDOps() []string { return wire.ASDDOps() }

// asddOp runs one ASDD operation through the application layer: the same
// path as the CLI's without a daemon.
func (s *Server) asddOp(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	op, err := wire.DecodeASDDOp(r.PathValue("op"), body)
	if err != nil {
		writeError(w, err)
		return
	}
	start := time.Now()
	resp, err := s.app.ASDD(r.Context(), op)
	s.observeOp(start, resp != nil && resp.Committed, err)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// implOp runs one change of the task manifest (POST /v1/impl).
func (s *Server) implOp(w http.ResponseWriter, r *http.Request) { serveOp(s, w, r, s.app.Impl) }

// stateOp runs one change of the state-manager's state (POST /v1/state).
func (s *Server) stateOp(w http.ResponseWriter, r *http.Request) { serveOp(s, w, r, s.app.UpdateState) }

// cycleOp runs one operation on a dev cycle (POST /v1/cycle).
func (s *Server) cycleOp(w http.ResponseWriter, r *http.Request) { serveOp(s, w, r, s.app.UpdateCycle) }

// rebuild rebuilds the ASDD manifest from its journal or the project's
// files (POST /v1/rebuild, a human decision).
func (s *Server) rebuild(w http.ResponseWriter, r *http.Request) { serveOp(s, w, r, s.app.Rebuild) }

// serveOp decodes a request of type Req, runs it through the application
// layer and answers its response: the door of every document operation.
func serveOp[Req, Resp any](s *Server, w http.ResponseWriter, r *http.Request, run func(context.Context, Req) (*Resp, error)) {
	var req Req
	if !s.decodeRequest(w, r, &req) {
		return
	}
	start := time.Now()
	resp, err := run(r.Context(), req)
	s.observeOp(start, err == nil, err)
	s.answer(w, resp, err)
}

func (s *Server) decodeRequest(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := s.readBody(w, r)
	if err == nil {
		err = wire.DecodeStrict(body, v)
	}
	if err != nil {
		writeError(w, err)
		return false
	}
	return true
}

func (s *Server) answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// getSlice returns one slice of the latest manifest, as the daemon keeps
// it: no copy of the manifest, one slice encoded.
func (s *Server) getSlice(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	m, rev, err := s.app.Latest(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	sl, err := m.Find(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := asdd.Marshal(sl)
	if err != nil {
		writeError(w, err)
		return
	}
	s.m.reads.Observe(time.Since(start).Seconds())
	w.Header().Set("ETag", fmt.Sprintf("%q", fmt.Sprint(rev)))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	w.Write([]byte{'\n'})
}

// rollback restores a document's past value (POST /v1/rollback).
func (s *Server) rollback(w http.ResponseWriter, r *http.Request) {
	var req wire.RollbackRequest
	if !s.decodeRequest(w, r, &req) {
		return
	}
	if err := s.documentKey(req.Key); err != nil {
		writeError(w, err)
		return
	}
	start := time.Now()
	resp, err := s.app.Rollback(r.Context(), req)
	s.observeOp(start, resp != nil && resp.Changed, err)
	s.answer(w, resp, err)
}

// applyJQ runs a jq program on a document (POST /v1/jq).
func (s *Server) applyJQ(w http.ResponseWriter, r *http.Request) {
	var req wire.JQRequest
	if !s.decodeRequest(w, r, &req) {
		return
	}
	if err := s.documentKey(req.Key); err != nil {
		writeError(w, err)
		return
	}
	start := time.Now()
	resp, err := s.app.ApplyJQ(r.Context(), req)
	s.observeOp(start, resp != nil && resp.Changed, err)
	s.answer(w, resp, err)
}
