package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store"
)

// The state of the one document: its revision and value.
type regState struct {
	Rev uint64
	N   int
}

type regInput struct {
	Op   string // read, write, cas
	N    int    // value written
	Base uint64 // cas: the revision it must apply to
}

type regOutput struct {
	Rev uint64 // read: revision seen; write/cas: revision committed
	N   int    // read: value seen
	OK  bool   // cas: committed (false: CONFLICT)
}

var registerModel = porcupine.Model{
	Init: func() any { return regState{} },
	Step: func(st, in, out any) (bool, any) {
		s, i, o := st.(regState), in.(regInput), out.(regOutput)
		switch i.Op {
		case "read":
			return o.Rev == s.Rev && o.N == s.N, s
		case "write":
			return o.Rev == s.Rev+1, regState{Rev: s.Rev + 1, N: i.N}
		case "cas":
			if s.Rev != i.Base {
				return !o.OK, s
			}
			return o.OK && o.Rev == s.Rev+1, regState{Rev: s.Rev + 1, N: i.N}
		}
		return false, s
	},
	DescribeOperation: func(in, out any) string {
		return fmt.Sprintf("%+v -> %+v", in, out)
	},
}

// A recorded history of concurrent reads, read-modify-write updates and
// compare-and-swap commits on one document, through the HTTP API, is
// linearizable.
func TestLinearizable(t *testing.T) {
	d := start(t, server.Options{})
	ctx := context.Background()
	const key = "state/reg.json"
	res, err := d.c.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: json.RawMessage(`{"n":0}`)}, nil
	}, store.Create())
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 1 {
		t.Fatalf("first revision %d", res.Revision)
	}
	origin := time.Now()
	now := func() int64 { return int64(time.Since(origin)) }
	var (
		mu  sync.Mutex
		ops []porcupine.Operation
		wg  sync.WaitGroup
	)
	// Revision 1 holds n=0: begin the history there.
	ops = append(ops, porcupine.Operation{ClientId: 0, Input: regInput{Op: "write", N: 0}, Call: 0, Output: regOutput{Rev: 1}, Return: 0})
	const clients, each = 8, 25
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for i := range each {
				n := (c+1)*1000 + i
				var op porcupine.Operation
				op.ClientId = c + 1
				op.Call = now()
				switch r := rng.IntN(4); {
				case r < 2:
					doc, err := d.c.Get(ctx, key)
					if err != nil {
						t.Error(err)
						return
					}
					var v struct{ N int }
					json.Unmarshal(doc.Value, &v)
					op.Input, op.Output = regInput{Op: "read"}, regOutput{Rev: doc.Revision, N: v.N}
				case r == 2:
					res, err := d.c.Update(ctx, key, func(store.Document) (store.Change, error) {
						return store.Change{Value: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}, nil
					})
					if err != nil {
						t.Error(err)
						return
					}
					op.Input, op.Output = regInput{Op: "write", N: n}, regOutput{Rev: res.Revision}
				default:
					// CAS on a revision read a moment ago (often stale).
					base, err := d.c.Get(ctx, key)
					if err != nil {
						t.Error(err)
						return
					}
					op.Call = now()
					res, err := d.c.Put(ctx, key, base, store.Change{Value: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}, false)
					switch {
					case err == nil:
						op.Output = regOutput{Rev: res.Revision, OK: true}
					case reason.CodeOf(err) == reason.Conflict:
						op.Output = regOutput{}
					default:
						t.Error(err)
						return
					}
					op.Input = regInput{Op: "cas", N: n, Base: base.Revision}
				}
				op.Return = now()
				mu.Lock()
				ops = append(ops, op)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	res2 := porcupine.CheckOperationsTimeout(registerModel, ops, 20*time.Second)
	if res2 != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (%v)", len(ops), res2)
	}
	t.Logf("%d operations, linearizable", len(ops))
}

// The model rejects what a broken store would do: a read after an
// acknowledged write that still returns the older value.
func TestRegisterModelCatchesStaleRead(t *testing.T) {
	ops := []porcupine.Operation{
		{ClientId: 0, Input: regInput{Op: "write", N: 0}, Call: 0, Output: regOutput{Rev: 1}, Return: 1},
		{ClientId: 1, Input: regInput{Op: "write", N: 5}, Call: 2, Output: regOutput{Rev: 2}, Return: 3},
		{ClientId: 2, Input: regInput{Op: "read"}, Call: 4, Output: regOutput{Rev: 1, N: 0}, Return: 5},
	}
	if porcupine.CheckOperations(registerModel, ops) {
		t.Fatal("a stale read passed the check")
	}
	ops[2].Output = regOutput{Rev: 2, N: 5}
	if !porcupine.CheckOperations(registerModel, ops) {
		t.Fatal("a correct history failed the check")
	}
}
