package etcd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// DefaultMaxRequestBytes is etcd's default --max-request-bytes (1.5 MiB).
const DefaultMaxRequestBytes = 3 << 19

// DefaultPrefix is the key prefix when none is given.
const DefaultPrefix = "/custodian/"

// Options configure a Store.
type Options struct {
	// Prefix is the etcd key prefix of this project's state; it ends in
	// "/" (added if missing). DefaultPrefix when empty.
	Prefix string
	// Limits bound document size and depth (as in the file backend).
	Limits store.Limits
	// MaxRequestBytes is the etcd server's request size limit
	// (--max-request-bytes); a commit that would exceed it is refused with
	// INVALID_INPUT. DefaultMaxRequestBytes when 0.
	MaxRequestBytes int
	// Now is the clock for record times; time.Now by default.
	Now func() time.Time
}

// Store is the etcd backend. It is safe for concurrent use; any number of
// Stores, in any number of processes on any machines, may share a prefix.
type Store struct {
	c      *clientv3.Client
	owns   bool
	prefix string
	opts   Options
	source string // the store URL without its password (Open)

	mu     sync.Mutex
	docs   map[string]*doc
	closed bool
	done   chan struct{} // closed by Close: ends watches
}

var _ store.Store = (*Store)(nil)

// New returns a Store on an existing client. Close does not close the
// client.
func New(c *clientv3.Client, opts Options) *Store {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if !strings.HasSuffix(opts.Prefix, "/") {
		opts.Prefix += "/"
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{c: c, prefix: opts.Prefix, opts: opts, docs: map[string]*doc{}, done: make(chan struct{})}
}

// Client returns the etcd client the store uses.
func (s *Store) Client() *clientv3.Client { return s.c }

// Source names the store in messages and mirror state files: its URL
// without the password when Open made it, else its prefix.
func (s *Store) Source() string {
	if s.source != "" {
		return s.source
	}
	return s.prefix
}

// Prefix returns the key prefix, ending in "/".
func (s *Store) Prefix() string { return s.prefix }

// Close releases the store, and its client if Open created it.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.done)
	if s.owns {
		if err := s.c.Close(); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("close etcd client: %w", err)
		}
	}
	return nil
}

var errClosed = errors.New("store is closed")

// doc is what this Store knows of one document: the state after the last
// read or commit through it, and the mutex its goroutines queue on.
type doc struct {
	key string

	qmu     sync.Mutex // guards queue and leading
	queue   []*request // Updates waiting for the next batch
	leading bool       // a goroutine is committing batches

	mu sync.Mutex // held while a batch is decided and committed

	known   bool
	state   docState
	tree    any // state.value decoded, when hasTree
	hasTree bool
}

// docState is one read of a document key.
type docState struct {
	modRev int64  // etcd mod_revision of the document key (0: no key)
	rev    uint64 // custodian revision
	hash   string // hash of record rev
	sum    string // canonical sum of value
	value  []byte // nil: no document
}

func (s *Store) doc(key string) (*doc, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	d, ok := s.docs[key]
	if !ok {
		d = &doc{key: key}
		s.docs[key] = d
	}
	return d, nil
}

func (s *Store) docKey(key string) string { return s.prefix + "doc/" + key }

func (s *Store) journalPrefix(key string) string { return s.prefix + "journal/" + key + "//" }

func (s *Store) journalKey(key string, rev uint64) string {
	return s.journalPrefix(key) + fmt.Sprintf("%020d", rev)
}

// journalRange returns the etcd range [start, end) of records from..to
// (to 0: no upper bound).
func (s *Store) journalRange(key string, from, to uint64) (string, string) {
	if from == 0 {
		from = 1
	}
	start := s.journalKey(key, from)
	if to == 0 {
		return start, clientv3.GetPrefixRangeEnd(s.journalPrefix(key))
	}
	return start, s.journalKey(key, to) + "\x00"
}

// revOfJournalKey parses the revision at the end of a journal key.
func revOfJournalKey(k []byte) (uint64, bool) {
	i := bytes.LastIndex(k, []byte("//"))
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(k[i+2:]), 10, 64)
	return n, err == nil
}

type mvccKV = mvccpb.KeyValue

type header struct {
	Rev  uint64 `json:"rev"`
	Hash string `json:"hash"`
	Sum  string `json:"sum"`
}

// encodeDoc is the document key's value: header line, then the value.
func encodeDoc(h header, value []byte) ([]byte, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode document header: %w", err)
	}
	out := make([]byte, 0, len(hb)+1+len(value))
	out = append(append(append(out, hb...), '\n'), value...)
	return out, nil
}

func decodeDoc(key string, b []byte) (header, []byte, error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return header{}, nil, reason.New(reason.CorruptState, "etcd value of %s has no header line", key)
	}
	var h header
	dec := json.NewDecoder(bytes.NewReader(b[:i]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || h.Rev == 0 {
		return header{}, nil, reason.New(reason.CorruptState, "etcd value of %s has a bad header %q", key, b[:i])
	}
	return h, b[i+1:], nil
}

// stateOf converts a range response of the document key.
func stateOf(key string, kvs []*mvccKV) (docState, error) {
	if len(kvs) == 0 {
		return docState{}, nil
	}
	h, v, err := decodeDoc(key, kvs[0].Value)
	if err != nil {
		return docState{}, err
	}
	return docState{modRev: kvs[0].ModRevision, rev: h.Rev, hash: h.Hash, sum: h.Sum, value: v}, nil
}

// read fetches the document key; it returns the state and the etcd revision
// the read was served at.
func (s *Store) read(ctx context.Context, key string, opts ...clientv3.OpOption) (docState, int64, error) {
	resp, err := s.c.Get(ctx, s.docKey(key), opts...)
	if err != nil {
		return docState{}, 0, etcdError("read "+key, err)
	}
	st, err := stateOf(key, resp.Kvs)
	return st, resp.Header.Revision, err
}

func notFound(key string) error {
	return reason.New(reason.NotFound, "no document %s (nothing committed yet)", key)
}

// Get returns the latest committed document (a linearizable read).
func (s *Store) Get(ctx context.Context, key string) (store.Document, error) {
	if _, err := s.doc(key); err != nil {
		return store.Document{}, err
	}
	st, _, err := s.read(ctx, key)
	if err != nil {
		return store.Document{}, err
	}
	if st.value == nil {
		return store.Document{}, notFound(key)
	}
	return store.Document{Key: key, Revision: st.rev, Value: st.value}, nil
}

// Keys lists the documents under the prefix, in byte order.
func (s *Store) Keys(ctx context.Context) ([]string, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	p := s.docKey("")
	var keys []string
	start, end := p, clientv3.GetPrefixRangeEnd(p)
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(pageSize)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.c.Get(ctx, start, opts...)
		if err != nil {
			return nil, etcdError("list documents", err)
		}
		rev = resp.Header.Revision
		for _, kv := range resp.Kvs {
			keys = append(keys, strings.TrimPrefix(string(kv.Key), p))
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return keys, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

func (s *Store) open() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	return nil
}

// etcdError wraps a client error, turning etcd's verdicts that are about
// the request into reason codes.
func etcdError(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", what, err)
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "request is too large"), strings.Contains(msg, "message larger than max"):
		return reason.New(reason.InvalidInput, "%s: etcd refused the request as too large (%v)", what, err)
	case strings.Contains(msg, "permission denied"), strings.Contains(msg, "authentication failed"), strings.Contains(msg, "user name is empty"):
		return fmt.Errorf("%s: etcd authentication: %w", what, err)
	}
	return fmt.Errorf("%s: etcd: %w", what, err)
}
