package file

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/custodian-dev/custodian/store"
)

// value is one revision's value in memory: its bytes, or the Model a
// proposer committed it with (store.Change.Model), whose bytes are made
// once, when a read, the snapshot writer, a watcher or an update function
// needs them. Never changed once made, but for that memo; safe for
// concurrent use.
type value struct {
	raw   []byte         // the bytes (nil: make them from model)
	model json.Marshaler // the proposer's decoded value, nil for none
	// bound bounds the length of the bytes from above while they are not
	// made: the limit on a document's size is checked on it.
	bound int

	once sync.Once
	made atomic.Bool // out and err are set
	out  []byte
	err  error
}

func bytesValue(b []byte) *value { return &value{raw: b, bound: len(b)} }

// bytes returns the value's bytes, made from its model on first use.
func (v *value) bytes() ([]byte, error) {
	if v.raw != nil {
		return v.raw, nil
	}
	v.once.Do(func() {
		b, err := v.model.MarshalJSON()
		if err == nil && !json.Valid(b) {
			err = errors.New("not valid JSON")
		}
		if err != nil {
			v.err = fmt.Errorf("the model committed does not encode: %w", err)
		} else {
			v.out = b
		}
		v.made.Store(true)
	})
	return v.out, v.err
}

// peek returns the bytes when they are made (nil otherwise), making
// nothing.
func (v *value) peek() []byte {
	if v.raw != nil {
		return v.raw
	}
	if v.made.Load() {
		return v.out
	}
	return nil
}

// size is the length of the bytes, or the bound while they are not made.
func (v *value) size() int {
	if b := v.peek(); b != nil {
		return len(b)
	}
	return v.bound
}

// document returns revision rev, whose value is v (nil: none), as a
// store.Document: its bytes when they are made, and its model.
func (v *value) document(key string, rev uint64) store.Document {
	doc := store.Document{Key: key, Revision: rev}
	if v != nil {
		doc.Value, doc.Model = v.peek(), v.model
	}
	return doc
}
