package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/reason"
)

// LockInfo is what a lock key holds: who took the lock, when, and until
// when it is valid unless renewed.
type LockInfo struct {
	Name     string    `json:"name"`
	Holder   string    `json:"holder"`
	Acquired time.Time `json:"acquired"`
	Expires  time.Time `json:"expires"`
}

// Lock is a lock held through an etcd lease: when the lease expires (the
// holder crashed, or stopped renewing) etcd deletes the key and the lock is
// free.
type Lock struct {
	s    *Store
	key  string
	id   clientv3.LeaseID
	info LockInfo
}

// Info returns the lock's holder and times as of the last acquire or renew.
func (l *Lock) Info() LockInfo { return l.info }

func (s *Store) lockKey(name string) string { return s.prefix + "lock/" + name }

func (s *Store) beatKey(name string) string { return s.prefix + "heartbeat/" + name }

func checkName(what, name string) error {
	if name == "" || strings.ContainsAny(name, "\x00/") {
		return reason.New(reason.InvalidInput, "%s name %q must be non-empty, without '/' or NUL", what, name)
	}
	return nil
}

// leaseSeconds rounds a TTL up to etcd's whole seconds (at least 1).
func leaseSeconds(ttl time.Duration) int64 {
	sec := int64((ttl + time.Second - 1) / time.Second)
	return max(sec, 1)
}

// Acquire takes the named lock for holder for ttl (rounded up to whole
// seconds). A lock held by someone else is SLICE_LOCKED with the holder and
// expiry in the error's details; a lock already held by the same holder is
// taken over (its expiry renewed on a new lease).
func (s *Store) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (*Lock, error) {
	if err := checkName("lock", name); err != nil {
		return nil, err
	}
	if holder == "" {
		return nil, reason.New(reason.InvalidInput, "lock %s needs a holder", name)
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	sec := leaseSeconds(ttl)
	g, err := s.c.Grant(ctx, sec)
	if err != nil {
		return nil, etcdError("grant lease for lock "+name, err)
	}
	now := s.opts.Now().UTC()
	info := LockInfo{Name: name, Holder: holder, Acquired: now, Expires: now.Add(time.Duration(sec) * time.Second)}
	b, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encode lock %s: %w", name, err)
	}
	k := s.lockKey(name)
	cond := clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
	for range 3 {
		resp, err := s.c.Txn(ctx).If(cond).Then(clientv3.OpPut(k, string(b), clientv3.WithLease(g.ID))).Else(clientv3.OpGet(k)).Commit()
		if err != nil {
			s.revoke(g.ID)
			return nil, etcdError("acquire lock "+name, err)
		}
		if resp.Succeeded {
			return &Lock{s: s, key: k, id: g.ID, info: info}, nil
		}
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			cond = clientv3.Compare(clientv3.CreateRevision(k), "=", 0) // freed meanwhile
			continue
		}
		var cur LockInfo
		if err := json.Unmarshal(kvs[0].Value, &cur); err != nil {
			s.revoke(g.ID)
			return nil, reason.New(reason.CorruptState, "lock %s holds %q: %v", name, kvs[0].Value, err)
		}
		if cur.Holder != holder {
			s.revoke(g.ID)
			return nil, reason.New(reason.SliceLocked, "%s is locked by %s until %s", name, cur.Holder, cur.Expires.Format(time.RFC3339)).
				With("holder", cur.Holder).With("expires", cur.Expires)
		}
		// Ours already (a restarted holder): take it over on the new lease.
		cond = clientv3.Compare(clientv3.ModRevision(k), "=", kvs[0].ModRevision)
		info.Acquired = cur.Acquired
		if b, err = json.Marshal(info); err != nil {
			return nil, fmt.Errorf("encode lock %s: %w", name, err)
		}
	}
	s.revoke(g.ID)
	return nil, reason.New(reason.Conflict, "lock %s changed hands while acquiring it; try again", name)
}

func (s *Store) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = s.c.Revoke(ctx, id)
}

// errLeaseGone tells whether etcd no longer knows the lease.
func errLeaseGone(err error) bool {
	return errors.Is(err, rpctypes.ErrLeaseNotFound) || (err != nil && strings.Contains(err.Error(), "requested lease not found"))
}

// Renew extends the lock by its TTL from now. A lock whose lease already
// expired is lost (someone else may hold it now): CONFLICT.
func (l *Lock) Renew(ctx context.Context) error {
	resp, err := l.s.c.KeepAliveOnce(ctx, l.id)
	if errLeaseGone(err) || (err == nil && resp.TTL <= 0) {
		return reason.New(reason.Conflict, "lock %s expired before it was renewed; it is no longer held by %s", l.info.Name, l.info.Holder)
	}
	if err != nil {
		return etcdError("renew lock "+l.info.Name, err)
	}
	l.info.Expires = l.s.opts.Now().UTC().Add(time.Duration(resp.TTL) * time.Second)
	return nil
}

// Release frees the lock (revokes its lease). Releasing an expired lock is
// not an error.
func (l *Lock) Release(ctx context.Context) error {
	_, err := l.s.c.Revoke(ctx, l.id)
	if err != nil && !errLeaseGone(err) {
		return etcdError("release lock "+l.info.Name, err)
	}
	return nil
}

// LockHolder returns who holds the named lock, if anyone.
func (s *Store) LockHolder(ctx context.Context, name string) (LockInfo, bool, error) {
	if err := checkName("lock", name); err != nil {
		return LockInfo{}, false, err
	}
	resp, err := s.c.Get(ctx, s.lockKey(name))
	if err != nil {
		return LockInfo{}, false, etcdError("read lock "+name, err)
	}
	if len(resp.Kvs) == 0 {
		return LockInfo{}, false, nil
	}
	var info LockInfo
	if err := json.Unmarshal(resp.Kvs[0].Value, &info); err != nil {
		return LockInfo{}, false, reason.New(reason.CorruptState, "lock %s holds %q: %v", name, resp.Kvs[0].Value, err)
	}
	return info, true, nil
}

// Heartbeat is the last sign of life of an agent (or a daemon).
type Heartbeat struct {
	Name string          `json:"name"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Beat records a heartbeat for name that lives for ttl (rounded up to whole
// seconds) unless beaten again: a silent agent's heartbeat disappears.
func (s *Store) Beat(ctx context.Context, name string, data json.RawMessage, ttl time.Duration) error {
	if err := checkName("heartbeat", name); err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	if data != nil && !json.Valid(data) {
		return reason.New(reason.InvalidInput, "heartbeat %s: data is not JSON", name)
	}
	b, err := json.Marshal(Heartbeat{Name: name, At: s.opts.Now().UTC(), Data: data})
	if err != nil {
		return fmt.Errorf("encode heartbeat %s: %w", name, err)
	}
	g, err := s.c.Grant(ctx, leaseSeconds(ttl))
	if err != nil {
		return etcdError("grant lease for heartbeat "+name, err)
	}
	// The previous beat's lease stays until its own expiry; the key now
	// lives on the new one.
	if _, err := s.c.Put(ctx, s.beatKey(name), string(b), clientv3.WithLease(g.ID)); err != nil {
		s.revoke(g.ID)
		return etcdError("record heartbeat "+name, err)
	}
	return nil
}

// Beats lists the heartbeats that have not expired, by name.
func (s *Store) Beats(ctx context.Context) ([]Heartbeat, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	resp, err := s.c.Get(ctx, s.beatKey(""), clientv3.WithPrefix())
	if err != nil {
		return nil, etcdError("read heartbeats", err)
	}
	out := make([]Heartbeat, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var h Heartbeat
		if err := json.Unmarshal(kv.Value, &h); err != nil {
			return nil, reason.New(reason.CorruptState, "heartbeat %s holds %q: %v", kv.Key, kv.Value, err)
		}
		out = append(out, h)
	}
	return out, nil
}
