package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/store"
)

// DefaultMaxWatchers is the default cap on open watch streams
// (Options.MaxWatchers).
const DefaultMaxWatchers = 1024

// ringSize is how many of a document's latest commits its hub keeps, as
// encoded events: a stream further behind reads the journal first.
const ringSize = 256

// fanOutRest is how long a hub's fan-out rests after a round, as a
// multiple of the round's length: the fan-out takes at most a quarter of
// the time, however many streams there are and however large the commits,
// and leaves the rest to the commits it reports. A commit after a quiet
// spell goes out at once; commits that arrive while the fan-out rests go
// out together in the next round, one write per stream (2,000 live streams
// on a loaded 2-core machine: a round every few hundred milliseconds).
const fanOutRest = 3

// maxFanOutRest bounds the rest after a long round (streams that stopped
// reading, each ended after fanOutWriteTimeout).
const maxFanOutRest = time.Second

// fanOutWriteTimeout bounds a fan-out write. A stream's writes only block
// when its client stopped reading and the socket's buffers are full; such
// a stream is ended (its client resumes with Last-Event-ID) rather than
// holding up the others.
const fanOutWriteTimeout = 5 * time.Millisecond

// watchHubs fans commits out to the watch streams from memory. One hub per
// watched document follows the store (one store.Watch: one journal read
// and one JSON encoding per commit, however many streams watch) and
// writes each commit to every live stream from one goroutine, so that a
// commit wakes one goroutine, not one per stream. A stream that starts
// behind the hub's ring reads the journal itself, then joins. Streams are
// counted against Options.MaxWatchers.
type watchHubs struct {
	mu   sync.Mutex
	open int             // streams open
	hubs map[string]*hub // by document key, while a stream watches it
}

// event is one commit as a stream sends it.
type event struct {
	rev   uint64
	frame []byte // "id: …\nevent: commit\ndata: …\n\n"
}

// hub follows one document for its streams.
type hub struct {
	key    string
	cancel context.CancelFunc
	done   chan struct{} // closed when both goroutines ended
	users  int           // streams using it (under watchHubs.mu)
	kick   chan struct{} // (cap 1) there are commits to fan out

	mu   sync.Mutex
	ring []event // the latest commits, consecutive revisions, oldest first; never changed in place
	head uint64  // the last revision followed (the ring's last, or where it started)
	err  error   // why following stopped; nil while it runs
	live map[*stream]bool
	// fanned is the head of the last fan-out round: every live stream has
	// been written up to it (streams that joined since, further).
	fanned uint64
}

// stream is one watch stream, as the hub writes to it.
type stream struct {
	write  func(b []byte, timeout time.Duration) bool
	mu     sync.Mutex // one writer at a time: the fan-out or the stream's own goroutine
	pos    uint64     // the last revision written
	behind chan struct{}
	gone   chan struct{}
	once   sync.Once
	end    error // why the hub ended it (under mu)
}

func (st *stream) kill() { st.once.Do(func() { close(st.gone) }) }

// admit counts a new stream against the cap; false: over it.
func (s *Server) admit() bool {
	w := &s.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open >= s.o.MaxWatchers {
		return false
	}
	w.open++
	return true
}

func (s *Server) release() {
	w := &s.watches
	w.mu.Lock()
	w.open--
	w.mu.Unlock()
}

// hubFor returns the running hub of key, starting it (following from the
// document's current revision) if none runs; put gives it back.
func (s *Server) hubFor(ctx context.Context, key string) (*hub, error) {
	w := &s.watches
	w.mu.Lock()
	if h := w.hubs[key]; h != nil {
		h.users++
		w.mu.Unlock()
		return h, nil
	}
	w.mu.Unlock()
	// The current revision, read without holding up other streams.
	var start uint64
	doc, err := s.app.Doc(ctx, key)
	if err != nil {
		return nil, err
	}
	start = doc.Revision
	w.mu.Lock()
	defer w.mu.Unlock()
	if h := w.hubs[key]; h != nil { // another stream started it meanwhile
		h.users++
		return h, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &hub{key: key, cancel: cancel, done: make(chan struct{}), users: 1, head: start, fanned: start,
		kick: make(chan struct{}, 1), live: map[*stream]bool{}}
	if w.hubs == nil {
		w.hubs = map[string]*hub{}
	}
	w.hubs[key] = h
	followed := make(chan struct{})
	go func() { defer close(followed); h.follow(ctx, s.app, start) }()
	go func() { defer close(h.done); h.fanOut(ctx); <-followed }()
	return h, nil
}

// put gives a hub back; the last stream to leave stops it.
func (s *Server) put(h *hub) {
	w := &s.watches
	w.mu.Lock()
	h.users--
	last := h.users == 0
	if last && w.hubs[h.key] == h {
		delete(w.hubs, h.key)
	}
	w.mu.Unlock()
	if last {
		h.cancel()
		<-h.done
	}
}

// follow reads the document's commits after start into the ring.
func (h *hub) follow(ctx context.Context, st app.Reader, start uint64) {
	var err error
	for c, werr := range st.Watch(ctx, h.key, start) {
		if werr != nil {
			err = werr
			break
		}
		e, eerr := encodeEvent(c)
		if eerr != nil {
			err = eerr
			break
		}
		h.mu.Lock()
		ring := h.ring
		if len(ring) >= ringSize {
			// Drop the oldest, unless a live stream may still need it:
			// every live stream has been written up to h.fanned. A ring
			// longer than ringSize is the fan-out running behind.
			if keep := ring[1:]; keep[0].rev <= h.fanned+1 {
				ring = slices.Clone(keep)
			}
		}
		h.ring = append(ring, e)
		h.head = c.Rev
		h.mu.Unlock()
		h.poke()
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = errors.New("watch ended")
	}
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	h.poke()
}

func (h *hub) poke() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// fanOut writes new commits to the live streams, one round per kick,
// resting fanOutRest times as long as each round took.
func (h *hub) fanOut(ctx context.Context) {
	var next time.Time // no round before
	for {
		select {
		case <-h.kick:
		case <-ctx.Done():
			return // the last stream left
		}
		if wait := time.Until(next); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		began := time.Now()
		h.mu.Lock()
		ring, head, err := h.ring, h.head, h.err
		live := make([]*stream, 0, len(h.live))
		for st := range h.live {
			live = append(live, st)
		}
		h.mu.Unlock()
		first := head + 1 - uint64(len(ring))
		var buf []byte
		retry := false
		for _, st := range live {
			if !st.mu.TryLock() {
				// Its own goroutine is writing (a keep-alive): next round.
				retry = true
				continue
			}
			switch {
			case st.pos < head && st.pos+1 < first:
				// It fell behind the ring: it reads the journal itself.
				h.detach(st)
				select {
				case st.behind <- struct{}{}:
				default:
				}
			case st.pos < head:
				buf = buf[:0]
				for _, e := range ring[st.pos+1-first:] {
					buf = append(buf, e.frame...)
				}
				if st.write(buf, fanOutWriteTimeout) {
					st.pos = head
				} else {
					h.detach(st)
					st.kill()
				}
			}
			if err != nil && st.pos >= head {
				h.detach(st)
				st.end = err
				st.kill()
			}
			st.mu.Unlock()
		}
		if !retry {
			h.mu.Lock()
			h.fanned = head
			h.mu.Unlock()
		}
		if err != nil && !retry {
			return
		}
		end := time.Now()
		next = end.Add(min(fanOutRest*end.Sub(began), maxFanOutRest))
		if retry {
			h.poke()
			if soon := end.Add(time.Millisecond); next.Before(soon) {
				next = soon // not sooner than a millisecond
			}
		}
	}
}

func (h *hub) detach(st *stream) {
	h.mu.Lock()
	delete(h.live, st)
	h.mu.Unlock()
}

// attach makes st live once it has written everything up to the hub's
// head. It returns the commits it must write first (from the ring, or
// behind: read the journal up to revision to), or the hub's error.
func (h *hub) attach(st *stream) (frames []byte, last uint64, behind bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first := h.head + 1 - uint64(len(h.ring))
	switch {
	case st.pos < h.head && st.pos+1 >= first:
		for _, e := range h.ring[st.pos+1-first:] {
			frames = append(frames, e.frame...)
		}
		return frames, h.head, false, nil
	case st.pos < h.head:
		return nil, first - 1, true, nil
	case h.err != nil:
		return nil, st.pos, false, h.err
	}
	h.live[st] = true
	return nil, st.pos, false, nil
}

func encodeEvent(c store.Commit) (event, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return event{}, err
	}
	return event{rev: c.Rev, frame: fmt.Appendf(nil, "id: %d\nevent: commit\ndata: %s\n\n", c.Rev, b)}, nil
}

// join brings st up to the hub's head, reading the journal and the ring,
// and makes it live.
func (s *Server) join(ctx context.Context, h *hub, st *stream) error {
	for {
		frames, last, behind, err := h.attach(st)
		switch {
		case err != nil:
			return err
		case behind:
			if err := s.catchUp(ctx, h.key, st, last); err != nil {
				return err
			}
		case len(frames) > 0:
			st.mu.Lock()
			ok := st.write(frames, 0)
			if ok {
				st.pos = last
			}
			st.mu.Unlock()
			if !ok {
				return errGone
			}
		default:
			return nil
		}
	}
}

// catchUp writes the commits after st.pos up to to, read from the store's
// journal.
func (s *Server) catchUp(ctx context.Context, key string, st *stream, to uint64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for c, err := range s.app.Watch(ctx, key, st.pos) {
		if err != nil {
			return err
		}
		e, err := encodeEvent(c)
		if err != nil {
			return err
		}
		st.mu.Lock()
		ok := st.write(e.frame, 0)
		if ok {
			st.pos = c.Rev
		}
		st.mu.Unlock()
		if !ok {
			return errGone
		}
		if c.Rev >= to {
			return nil
		}
	}
	if ctx.Err() != nil {
		return errGone
	}
	return nil
}

// errGone: the stream ended (client gone, server stopping).
var errGone = errors.New("watch stream ended")
