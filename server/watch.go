package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// watch streams commits as Server-Sent Events:
//
//	id: <revision>
//	event: commit
//	data: <store.Commit as JSON>
//
// from ?from=REV (commits after REV; default 0, every commit) or, when the
// client reconnects, from its Last-Event-ID. ?key= names the document (the
// ASDD manifest by default). An error ends the stream with an "error" event
// carrying the reason. Idle streams get a ": keep-alive" comment every
// WatchKeepAlive. Commits are fanned out from memory (watchhub.go): a
// commit costs one journal read and one encoding however many streams
// watch. Past Options.MaxWatchers open streams, a new one is refused with
// 503 and Retry-After.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		key = asdd.Key
	}
	// Only a document is watched (a watch of any other path would reach
	// the store, which must not so much as look there).
	if err := s.documentKey(key); err != nil {
		writeError(w, err)
		return
	}
	from, _, err := uintParam(r, "from")
	if err != nil {
		writeError(w, err)
		return
	}
	if last := strings.TrimSpace(r.Header.Get("Last-Event-ID")); last != "" {
		n, err := strconv.ParseUint(last, 10, 64)
		if err != nil {
			writeError(w, reason.New(reason.InvalidInput, "Last-Event-ID %q is not a revision number", last))
			return
		}
		from = n
	}
	if !s.admit() {
		w.Header().Set("Retry-After", "5")
		writeErrorStatus(w, http.StatusServiceUnavailable, "UNAVAILABLE",
			fmt.Sprintf("too many watch streams open (the cap is %d, serve --max-watchers); retry later", s.o.MaxWatchers))
		return
	}
	defer s.release()
	hb, err := s.hubFor(r.Context(), key)
	if err != nil {
		writeError(w, err)
		return
	}
	defer s.put(hb)
	rc := http.NewResponseController(w)
	// The stream outlives WriteTimeout: each write sets its own deadline.
	_ = rc.SetWriteDeadline(time.Time{})
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	s.m.watchers.Inc()
	defer s.m.watchers.Dec()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{pos: from, behind: make(chan struct{}, 1), gone: make(chan struct{})}
	st.write = func(b []byte, timeout time.Duration) bool {
		if timeout <= 0 {
			timeout = s.o.WriteTimeout
		}
		_ = rc.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// Once the handler returns, the fan-out must not write to w.
	defer func() {
		hb.detach(st)
		st.mu.Lock()
		st.write = func([]byte, time.Duration) bool { return false }
		st.mu.Unlock()
	}()
	say := func(b []byte) bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.write(b, 0)
	}
	if !say([]byte(": watching " + key + "\n\n")) {
		return
	}
	tick := time.NewTicker(s.o.WatchKeepAlive)
	defer tick.Stop()
	for {
		if err := s.join(ctx, hb, st); err != nil {
			if !errors.Is(err, errGone) && ctx.Err() == nil {
				say(errorEvent(err))
			}
			return
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return
			case <-st.gone:
				st.mu.Lock()
				end := st.end
				st.mu.Unlock()
				if end != nil && ctx.Err() == nil {
					say(errorEvent(end))
				}
				return
			case <-st.behind:
				break wait
			case <-tick.C:
				// A live stream's own write holds up the fan-out to it:
				// a client that does not take a keep-alive within a
				// second has stopped reading.
				st.mu.Lock()
				ok := st.write([]byte(": keep-alive\n\n"), time.Second)
				st.mu.Unlock()
				if !ok {
					return
				}
			}
		}
	}
}

// errorEvent is the event that ends a stream on an error.
func errorEvent(err error) []byte {
	e, ok := reason.As(err)
	if !ok {
		e = &reason.Error{Code: "INTERNAL", Message: err.Error()}
	}
	b, _ := json.Marshal(ErrorBody{Error: e})
	return fmt.Appendf(nil, "event: error\ndata: %s\n\n", b)
}
