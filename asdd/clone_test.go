package asdd

import (
	"encoding/json"
	"reflect"
	"testing"
)

// fill sets every field of the value v points to, recursively, to a
// non-zero value, so that a field added later is covered by the clone
// tests without their being edited.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"x":1}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString("s")
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(depth + 1))
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Bool:
		v.SetBool(true)
	}
}

// shared reports a pointer, slice or map reachable from both a and b.
func shared(a, b reflect.Value) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return a.Type().String()
		}
		return shared(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if s := shared(a.Field(i), b.Field(i)); s != "" {
				return a.Type().Field(i).Name + ": " + s
			}
		}
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return a.Type().String()
		}
		for i := range a.Len() {
			if s := shared(a.Index(i), b.Index(i)); s != "" {
				return s
			}
		}
	case reflect.Map:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return a.Type().String()
		}
		for _, k := range a.MapKeys() {
			if s := shared(a.MapIndex(k), b.MapIndex(k)); s != "" {
				return s
			}
		}
	}
	return ""
}

// The typed clones copy as deepCopy does: equal, and nothing shared.
func TestTypedClones(t *testing.T) {
	var h Heartbeat
	fill(reflect.ValueOf(&h).Elem(), 0)
	hc := h.clone()
	if !reflect.DeepEqual(*hc, h) || !reflect.DeepEqual(hc, deepCopy(reflect.ValueOf(&h)).Interface()) {
		t.Fatalf("heartbeat clone %+v, want %+v", hc, h)
	}
	if s := shared(reflect.ValueOf(&h), reflect.ValueOf(hc)); s != "" {
		t.Fatalf("heartbeat clone shares %s", s)
	}
	var pc ProjectContext
	fill(reflect.ValueOf(&pc).Elem(), 0)
	pcc := pc.clone()
	if !reflect.DeepEqual(pcc, pc) {
		t.Fatalf("context clone %+v, want %+v", pcc, pc)
	}
	if s := shared(reflect.ValueOf(pc), reflect.ValueOf(pcc)); s != "" {
		t.Fatalf("context clone shares %s", s)
	}
	// nil stays nil and empty stays empty (visible in JSON).
	empty := ProjectContext{ProductGoals: []string{}, Extra: Extra{}}
	if c := empty.clone(); c.ProductGoals == nil || c.Extra == nil || c.NeedsHumanReview != nil {
		t.Fatalf("empty context clone %#v", c)
	}
}
