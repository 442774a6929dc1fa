package impl

import (
	"fmt"
)

// UnmarshalJSON implements json.Unmarshaler.
func (m *Manifest) UnmarshalJSON(data []byte) error {
	if err := validate(data); err != nil {
		return err
	}
	return m.decode(data)
}

func (m *Manifest) decode(data []byte) error {
	members, err := splitObject(data)
	if err != nil {
		return err
	}
	*m = Manifest{}
	for _, f := range members {
		switch f.Key {
		case "version":
			err = decodeString("manifest", f.Key, f.Value, &m.Version)
		case "plan":
			err = m.Plan.decode("plan", f.Value)
		case "phases":
			var elems [][]byte
			if elems, err = arrayField("manifest", f.Key, f.Value); err == nil {
				m.Phases = make([]Phase, len(elems))
				for i, e := range elems {
					if err = m.Phases[i].decode(fmt.Sprintf("phases[%d]", i), e); err != nil {
						break
					}
				}
			}
		case "tasks":
			var elems [][]byte
			if elems, err = arrayField("manifest", f.Key, f.Value); err == nil {
				m.Tasks = make([]Task, len(elems))
				for i, e := range elems {
					if err = m.Tasks[i].decode(fmt.Sprintf("tasks[%d]", i), e); err != nil {
						break
					}
				}
			}
		default:
			m.Extra = append(m.Extra, Member{f.Key, compact(f.Value)})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func arrayField(where, key string, raw []byte) ([][]byte, error) {
	elems, err := splitArray(raw)
	if err != nil {
		return nil, fieldError(where, key, "an array", raw)
	}
	out := make([][]byte, len(elems))
	for i, e := range elems {
		out[i] = e
	}
	return out, nil
}

// MarshalJSON implements json.Marshaler.
func (m Manifest) MarshalJSON() ([]byte, error) {
	return m.appendJSON(make([]byte, 0, 256+300*len(m.Tasks))), nil
}

func (m *Manifest) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendKey(b, true, "version")
	b = appendString(b, m.Version)
	b = appendKey(b, false, "plan")
	b = m.Plan.appendJSON(b)
	b = appendKey(b, false, "phases")
	b = append(b, '[')
	for i := range m.Phases {
		if i > 0 {
			b = append(b, ',')
		}
		b = m.Phases[i].appendJSON(b)
	}
	b = append(b, ']')
	b = appendKey(b, false, "tasks")
	b = append(b, '[')
	for i := range m.Tasks {
		if i > 0 {
			b = append(b, ',')
		}
		b = m.Tasks[i].appendJSON(b)
	}
	b = append(b, ']')
	b = appendExtra(b, false, m.Extra)
	return append(b, '}')
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Plan) UnmarshalJSON(data []byte) error {
	if err := validate(data); err != nil {
		return err
	}
	return p.decode("plan", data)
}

func (p *Plan) decode(where string, data []byte) error {
	members, err := splitObject(data)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	*p = Plan{}
	for _, f := range members {
		switch f.Key {
		case "path":
			err = decodeString(where, f.Key, f.Value, &p.Path)
		case "number":
			err = decodeString(where, f.Key, f.Value, &p.Number)
		case "title":
			err = decodeString(where, f.Key, f.Value, &p.Title)
		case "decomposed_at":
			err = decodeString(where, f.Key, f.Value, &p.DecomposedAt)
		case "sha256":
			err = decodeString(where, f.Key, f.Value, &p.SHA256)
		default:
			p.Extra = append(p.Extra, Member{f.Key, compact(f.Value)})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (p Plan) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

func (p *Plan) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendKey(b, true, "path")
	b = appendString(b, p.Path)
	b = appendKey(b, false, "number")
	b = appendString(b, p.Number)
	b = appendKey(b, false, "title")
	b = appendString(b, p.Title)
	b = appendKey(b, false, "decomposed_at")
	b = appendString(b, p.DecomposedAt)
	if p.SHA256 != "" {
		b = appendKey(b, false, "sha256")
		b = appendString(b, p.SHA256)
	}
	b = appendExtra(b, false, p.Extra)
	return append(b, '}')
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Phase) UnmarshalJSON(data []byte) error {
	if err := validate(data); err != nil {
		return err
	}
	return p.decode("phase", data)
}

func (p *Phase) decode(where string, data []byte) error {
	members, err := splitObject(data)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	*p = Phase{}
	for _, f := range members {
		switch f.Key {
		case "number":
			err = decodeInt(where, f.Key, f.Value, &p.Number)
		case "depends_on":
			err = decodeInts(where, f.Key, f.Value, &p.DependsOn)
		case "bounded_contexts":
			err = decodeStrings(where, f.Key, f.Value, &p.BoundedContexts)
		default:
			p.Extra = append(p.Extra, Member{f.Key, compact(f.Value)})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (p Phase) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

func (p *Phase) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendKey(b, true, "number")
	b = fmt.Appendf(b, "%d", p.Number)
	b = appendKey(b, false, "depends_on")
	b = appendInts(b, p.DependsOn)
	b = appendKey(b, false, "bounded_contexts")
	b = appendStrings(b, p.BoundedContexts)
	b = appendExtra(b, false, p.Extra)
	return append(b, '}')
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Task) UnmarshalJSON(data []byte) error {
	if err := validate(data); err != nil {
		return err
	}
	return t.decode("task", data)
}

func (t *Task) decode(at string, data []byte) error {
	members, err := splitObject(data)
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	*t = Task{}
	where := at
	for _, f := range members {
		switch f.Key {
		case "id":
			err = decodeString(where, f.Key, f.Value, &t.ID)
			where = fmt.Sprintf("%s (id %q)", at, t.ID)
		case "phase":
			err = decodeInt(where, f.Key, f.Value, &t.Phase)
		case "description":
			err = decodeString(where, f.Key, f.Value, &t.Description)
		case "bounded_contexts":
			err = decodeStrings(where, f.Key, f.Value, &t.BoundedContexts)
		case "status":
			var s string
			err = decodeString(where, f.Key, f.Value, &s)
			t.Status = Status(s)
		case "branch":
			err = decodeNullableString(where, f.Key, f.Value, &t.Branch)
		case "check_results":
			err = decodeNullableString(where, f.Key, f.Value, &t.CheckResults)
		case "error":
			err = decodeNullableString(where, f.Key, f.Value, &t.Error)
		case "retries":
			err = decodeInt(where, f.Key, f.Value, &t.Retries)
		case "created_at":
			err = decodeString(where, f.Key, f.Value, &t.CreatedAt)
		case "updated_at":
			err = decodeString(where, f.Key, f.Value, &t.UpdatedAt)
		default:
			t.Extra = append(t.Extra, Member{f.Key, compact(f.Value)})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (t Task) MarshalJSON() ([]byte, error) { return t.appendJSON(nil), nil }

func (t *Task) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendKey(b, true, "id")
	b = appendString(b, t.ID)
	b = appendKey(b, false, "phase")
	b = fmt.Appendf(b, "%d", t.Phase)
	b = appendKey(b, false, "description")
	b = appendString(b, t.Description)
	b = appendKey(b, false, "bounded_contexts")
	b = appendStrings(b, t.BoundedContexts)
	b = appendKey(b, false, "status")
	b = appendString(b, string(t.Status))
	b = appendKey(b, false, "branch")
	b = appendNullableString(b, t.Branch)
	b = appendKey(b, false, "check_results")
	b = appendNullableString(b, t.CheckResults)
	b = appendKey(b, false, "error")
	b = appendNullableString(b, t.Error)
	b = appendKey(b, false, "retries")
	b = fmt.Appendf(b, "%d", t.Retries)
	b = appendKey(b, false, "created_at")
	b = appendString(b, t.CreatedAt)
	b = appendKey(b, false, "updated_at")
	b = appendString(b, t.UpdatedAt)
	b = appendExtra(b, false, t.Extra)
	return append(b, '}')
}

// Fields returns the task's fields in file order, each value JSON-encoded:
// the script's eleven fields, then any others the file carried.
func (t Task) Fields() Members {
	members, err := splitObject(t.appendJSON(nil))
	if err != nil { // unreachable: appendJSON writes an object
		return nil
	}
	return members
}
