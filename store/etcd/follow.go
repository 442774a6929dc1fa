package etcd

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/store"
)

// FollowDocs calls fn with the latest version of every document under the
// prefix, read at one etcd revision R, then follows an etcd watch of the
// document keys from R+1 and calls fn with the versions each watch response
// carries (the latest of each key: while fn runs, what arrives is merged,
// so a slow fn skips revisions instead of falling behind). A key's versions are never handed over out of order. When the
// watch ends (compaction, leader lost, the cluster away) it starts over
// with a fresh read, retrying every second while the cluster does not
// answer. It returns nil when ctx is done or the store is closed. A
// document value that does not decode is skipped (Verify reports it).
func (s *Store) FollowDocs(ctx context.Context, fn func([]store.Document)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	seen := map[string]uint64{} // key -> latest revision handed over
	give := func(docs []store.Document) {
		out := docs[:0]
		for _, d := range docs {
			if d.Revision > seen[d.Key] {
				seen[d.Key] = d.Revision
				out = append(out, d)
			}
		}
		if len(out) > 0 {
			fn(out)
		}
	}
	for ctx.Err() == nil {
		at, err := s.listDocs(ctx, give)
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		s.followDocs(ctx, at, give)
		sleep(ctx, 50*time.Millisecond)
	}
	return nil
}

// listDocs hands over every document as of one etcd revision, a page at
// a time, and returns that revision.
func (s *Store) listDocs(ctx context.Context, give func([]store.Document)) (int64, error) {
	p := s.docKey("")
	start, end := p, clientv3.GetPrefixRangeEnd(p)
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(pageSize)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.c.Get(ctx, start, opts...)
		if err != nil {
			return 0, etcdError("list documents", err)
		}
		rev = resp.Header.Revision
		give(s.docsOf(resp.Kvs))
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// followDocs hands over the document versions an etcd watch from at+1
// reports, until the watch ends. A goroutine takes the watch's responses
// as they come and keeps the latest version of each key; give gets all
// that is pending each time it is free, so a slow give skips revisions
// instead of falling behind the watch.
func (s *Store) followDocs(ctx context.Context, at int64, give func([]store.Document)) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	p := s.docKey("")
	ch := s.c.Watch(wctx, p, clientv3.WithRange(clientv3.GetPrefixRangeEnd(p)), clientv3.WithRev(at+1))
	var (
		mu      sync.Mutex
		pending []*mvccKV // latest of each key, in order of first appearance
		index   = map[string]int{}
	)
	ready := make(chan struct{}, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for wr := range ch {
			if wr.Err() != nil || wr.Canceled || wr.CompactRevision != 0 {
				return
			}
			mu.Lock()
			for _, kv := range puts(nil, wr.Events) {
				if i, ok := index[string(kv.Key)]; ok {
					if kv.ModRevision > pending[i].ModRevision {
						pending[i] = kv
					}
					continue
				}
				index[string(kv.Key)] = len(pending)
				pending = append(pending, kv)
			}
			mu.Unlock()
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	}()
	flush := func() {
		mu.Lock()
		kvs := pending
		pending, index = nil, map[string]int{}
		mu.Unlock()
		if len(kvs) > 0 {
			give(s.docsOf(kvs))
		}
	}
	for {
		select {
		case <-ready:
			flush()
		case <-ended:
			flush()
			return
		}
	}
}

func puts(kvs []*mvccKV, evs []*clientv3.Event) []*mvccKV {
	for _, ev := range evs {
		if ev.Type == mvccpb.PUT {
			kvs = append(kvs, ev.Kv)
		}
	}
	return kvs
}

// docsOf decodes document keys' values, skipping those that do not decode.
func (s *Store) docsOf(kvs []*mvccKV) []store.Document {
	p := s.docKey("")
	docs := make([]store.Document, 0, len(kvs))
	for _, kv := range kvs {
		key := strings.TrimPrefix(string(kv.Key), p)
		if store.CheckKey(key) != nil {
			continue
		}
		h, v, err := decodeDoc(key, kv.Value)
		if err != nil {
			continue
		}
		docs = append(docs, store.Document{Key: key, Revision: h.Rev, Value: v})
	}
	return docs
}
