package variant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// PathElem is one step into an object read as JSON: a map key, or the element of a list of
// objects whose "name" field equals Name (containers, env vars). Lists keyed by name are how
// the Kubernetes API identifies containers and env vars; an index would point at another
// element as soon as someone adds one.
type PathElem struct {
	// Key is the map key; unused for list elements.
	Key string
	// Name selects the list element whose "name" equals it.
	Name string
	// Item is true for a list element.
	Item bool
}

// MarshalJSON writes a map key as a string and a list element as {"name": ...}, so a
// snapshot reads naturally and a map key can never be mistaken for a list element.
func (e PathElem) MarshalJSON() ([]byte, error) {
	if e.Item {
		return json.Marshal(map[string]string{"name": e.Name})
	}
	return json.Marshal(e.Key)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *PathElem) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var item struct {
			Name *string `json:"name"`
		}
		if err := json.Unmarshal(data, &item); err != nil {
			return err
		}
		if item.Name == nil {
			return fmt.Errorf("path element %s: a list element needs a name", data)
		}
		*e = PathElem{Name: *item.Name, Item: true}
		return nil
	}
	var key string
	if err := json.Unmarshal(data, &key); err != nil {
		return fmt.Errorf("path element %s: %w", data, err)
	}
	*e = PathElem{Key: key}
	return nil
}

// Path locates one field of an object.
type Path []PathElem

// path builds a Path from map keys.
func path(keys ...string) Path {
	p := make(Path, 0, len(keys))
	for _, k := range keys {
		p = append(p, PathElem{Key: k})
	}
	return p
}

// item appends a list element selected by name.
func (p Path) item(name string) Path {
	out := append(Path{}, p...)
	return append(out, PathElem{Name: name, Item: true})
}

// key appends map keys.
func (p Path) key(keys ...string) Path {
	out := append(Path{}, p...)
	for _, k := range keys {
		out = append(out, PathElem{Key: k})
	}
	return out
}

// String renders the path for people: spec.template.spec.containers[app].resources.limits.cpu,
// with keys that contain dots or brackets quoted (metadata.annotations["strimzi.io/kraft"]).
func (p Path) String() string {
	var b strings.Builder
	for i, e := range p {
		switch {
		case e.Item:
			fmt.Fprintf(&b, "[%s]", e.Name)
		case strings.ContainsAny(e.Key, ".[]\" ") || e.Key == "":
			fmt.Fprintf(&b, "[%q]", e.Key)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.Key)
		}
	}
	return b.String()
}

// hasPrefix reports whether q is p or lies below it.
func (p Path) hasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// findItem returns the index of the element of list whose "name" equals name, or -1.
func findItem(list []any, name string) int {
	for i, el := range list {
		if m, ok := el.(map[string]any); ok {
			if n, _ := m["name"].(string); n == name {
				return i
			}
		}
	}
	return -1
}

// get returns the value at p, whether it exists, and for a list element its index.
func get(obj map[string]any, p Path) (value any, found bool, index int) {
	var cur any = obj
	index = -1
	for _, e := range p {
		if e.Item {
			list, ok := cur.([]any)
			if !ok {
				return nil, false, -1
			}
			i := findItem(list, e.Name)
			if i < 0 {
				return nil, false, -1
			}
			cur, index = list[i], i
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, -1
		}
		v, ok := m[e.Key]
		if !ok {
			return nil, false, -1
		}
		cur, index = v, -1
	}
	return cur, true, index
}

// existingPrefix is the length of the longest prefix of p (shorter than p) that exists in obj.
func existingPrefix(obj map[string]any, p Path) int {
	for l := len(p) - 1; l > 0; l-- {
		if _, found, _ := get(obj, p[:l]); found {
			return l
		}
	}
	return 0
}

// set puts value at p, creating missing maps and lists on the way. A missing list element is
// inserted at index (appended when index is negative or beyond the end), except in the middle
// of the path: set never invents a container to put a field into.
func set(obj map[string]any, p Path, value any, index int) error {
	if len(p) == 0 {
		return fmt.Errorf("empty path")
	}
	if p[0].Item {
		return fmt.Errorf("%s: an object is a map, not a list", p)
	}
	parent, err := ensureParent(obj, p)
	if err != nil {
		return err
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		if last.Item {
			return fmt.Errorf("%s: expected a list at %s", p, p[:len(p)-1])
		}
		c[last.Key] = value
		return nil
	case *listRef:
		m, ok := value.(map[string]any)
		if !ok || m["name"] != last.Name {
			return fmt.Errorf("%s: a list element must be an object named %q", p, last.Name)
		}
		list := c.list
		if i := findItem(list, last.Name); i >= 0 {
			list[i] = value
			return nil
		}
		if index < 0 || index > len(list) {
			index = len(list)
		}
		list = append(list, nil)
		copy(list[index+1:], list[index:])
		list[index] = value
		c.m[c.key] = list
		return nil
	}
	return fmt.Errorf("%s: unexpected parent", p)
}

// ensureParent walks to the container of p's last element, creating what is missing. It
// returns a map, or a pointer to the list (so an insertion can be stored back).
func ensureParent(obj map[string]any, p Path) (any, error) {
	cur := obj
	for i := 0; i < len(p)-1; i++ {
		e, next := p[i], p[i+1]
		if e.Item {
			return nil, fmt.Errorf("%s: internal error: list element handled out of turn", p)
		}
		if next.Item {
			v, ok := cur[e.Key]
			if !ok || v == nil {
				v = []any{}
				cur[e.Key] = v
			}
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s is not a list", p, p[:i+1])
			}
			if i+1 == len(p)-1 {
				return &listRef{m: cur, key: e.Key, list: list}, nil
			}
			j := findItem(list, next.Name)
			if j < 0 {
				return nil, fmt.Errorf("%s: no element named %q in %s", p, next.Name, p[:i+1])
			}
			m, ok := list[j].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s is not an object", p, p[:i+2])
			}
			cur = m
			i++
			continue
		}
		v, ok := cur[e.Key]
		if !ok || v == nil {
			m := map[string]any{}
			cur[e.Key] = m
			cur = m
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not an object", p, p[:i+1])
		}
		cur = m
	}
	return cur, nil
}

// listRef is a list inside a map, so that an insertion can be written back to the map.
type listRef struct {
	m    map[string]any
	key  string
	list []any
}

// del removes the field at p; a missing field is not an error.
func del(obj map[string]any, p Path) {
	if len(p) == 0 {
		return
	}
	parentPath, last := p[:len(p)-1], p[len(p)-1]
	var parent any = obj
	if len(parentPath) > 0 {
		v, found, _ := get(obj, parentPath)
		if !found {
			return
		}
		parent = v
	}
	if !last.Item {
		if m, ok := parent.(map[string]any); ok {
			delete(m, last.Key)
		}
		return
	}
	list, ok := parent.([]any)
	if !ok {
		return
	}
	i := findItem(list, last.Name)
	if i < 0 {
		return
	}
	list = append(list[:i:i], list[i+1:]...)
	// The list lives in its parent map; store the shortened list back.
	if len(parentPath) == 0 {
		return
	}
	grand, found, _ := get(obj, parentPath[:len(parentPath)-1])
	if !found {
		return
	}
	if gm, ok := grand.(map[string]any); ok && !parentPath[len(parentPath)-1].Item {
		gm[parentPath[len(parentPath)-1].Key] = list
	}
}

// prune removes the parents of p below the first keep elements when they are empty: they were
// created by the change being undone, and an empty map left behind would not equal "absent".
func prune(obj map[string]any, p Path, keep int) {
	for l := len(p) - 1; l > keep && l > 0; l-- {
		v, found, _ := get(obj, p[:l])
		if !found {
			continue
		}
		if !isEmpty(v) {
			return
		}
		del(obj, p[:l])
	}
}

func isEmpty(v any) bool {
	switch c := v.(type) {
	case map[string]any:
		return len(c) == 0
	case []any:
		return len(c) == 0
	}
	return false
}
