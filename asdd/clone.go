package asdd

import (
	"reflect"
	"slices"
)

// Clone returns a deep copy of m: no map, slice or pointer is shared, so
// the rules may change the copy freely.
func (m *Manifest) Clone() *Manifest {
	c := deepCopy(reflect.ValueOf(m)).Interface().(*Manifest)
	if c.AgentHeartbeats == nil {
		c.AgentHeartbeats = map[string]*Heartbeat{}
	}
	return c
}

// deepCopy copies v recursively: structs field by field, pointers, slices
// and maps into new ones; nil stays nil and empty stays empty (the
// difference is visible in JSON).
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Elem().Type())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			if c.Field(i).CanSet() {
				c.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			c.SetMapIndex(iter.Key(), deepCopy(iter.Value()))
		}
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem()))
		return c
	}
	return v
}

// clone copies a heartbeat as deepCopy does, without reflection (every
// heartbeat copies one).
func (h *Heartbeat) clone() *Heartbeat {
	c := *h
	c.CurrentWave, c.TasksCompleted, c.TasksRemaining = clonePtr(h.CurrentWave), clonePtr(h.TasksCompleted), clonePtr(h.TasksRemaining)
	c.Extra = h.Extra.Clone()
	return &c
}

// clone copies the project context as deepCopy does, without reflection
// (every operation copies it).
func (c ProjectContext) clone() ProjectContext {
	c.ProductGoals = slices.Clone(c.ProductGoals)
	c.GlobalConfidenceScore = clonePtr(c.GlobalConfidenceScore)
	c.NeedsHumanReview = slices.Clone(c.NeedsHumanReview)
	c.Extra = c.Extra.Clone()
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
