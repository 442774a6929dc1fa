package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
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
// WatchKeepAlive.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		key = asdd.Key
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

	type item struct {
		c   store.Commit
		err error
	}
	items := make(chan item, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c, err := range s.st.Watch(ctx, key, from) {
			select {
			case items <- item{c, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() { cancel(); <-done }()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.o.WriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte(": watching " + key + "\n\n")) {
		return
	}
	tick := time.NewTicker(s.o.WatchKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		case it := <-items:
			// Batch what is already queued into one write and flush.
			var buf []byte
			for {
				if it.err != nil {
					write(append(buf, errorEvent(it.err)...))
					return
				}
				b, err := json.Marshal(it.c)
				if err != nil {
					return
				}
				buf = fmt.Appendf(buf, "id: %d\nevent: commit\ndata: %s\n\n", it.c.Rev, b)
				if len(items) == 0 || len(buf) > 64<<10 {
					break
				}
				it = <-items
			}
			if !write(buf) {
				return
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
