package objpath

import (
	"fmt"
	"strconv"
	"strings"
)

// Path is a field's address: string steps are object keys, int steps
// list indexes. A jq path may hold an index as a float64, and a pointer
// holds every step as a string; an object or a list met on the way says
// which a step is.
type Path []any

// Pointer parses an RFC 6901 JSON pointer: "" is the whole document,
// anything else starts with "/", and "~1" and "~0" stand for "/" and "~".
func Pointer(p string) (Path, error) {
	if p == "" {
		return Path{}, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("JSON pointer %q must start with /", p)
	}
	tokens := strings.Split(p[1:], "/")
	out := make(Path, len(tokens))
	for i, tok := range tokens {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return out, nil
}

// key is step as an object key.
func key(step any) string {
	if s, ok := step.(string); ok {
		return s
	}
	return fmt.Sprint(step)
}

// index is step as an index into a list of n items, if it is one.
func index(step any, n int) (int, bool) {
	var i int
	switch s := step.(type) {
	case int:
		i = s
	case float64:
		i = int(s)
		if float64(i) != s {
			return 0, false
		}
	case string:
		var err error
		if i, err = strconv.Atoi(s); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return i, i >= 0 && i < n
}

// Get returns the value at p in doc, not a copy, and whether there is one.
func Get(doc any, p Path) (any, bool) {
	cur := doc
	for _, step := range p {
		switch node := cur.(type) {
		case map[string]any:
			v, ok := node[key(step)]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := index(step, len(node))
			if !ok {
				return nil, false
			}
			cur = node[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Set puts v at p in doc, making the objects missing on the way (a step
// into a made object is a key, whatever its type). A step into anything but
// an object or a list, or an index outside its list, is an error, and doc
// is then unchanged. The empty path changes nothing.
func Set(doc map[string]any, p Path, v any) error {
	if len(p) == 0 {
		return nil
	}
	var cur any = doc
	for n, step := range p {
		last := n == len(p)-1
		switch node := cur.(type) {
		case map[string]any:
			k := key(step)
			if last {
				node[k] = v
				return nil
			}
			next, ok := node[k]
			if !ok || next == nil {
				next = map[string]any{}
				node[k] = next
			}
			cur = next
		case []any:
			i, ok := index(step, len(node))
			if !ok {
				return fmt.Errorf("%v: index %v is not in the list", p, step)
			}
			if last {
				node[i] = v
				return nil
			}
			cur = node[i]
		default:
			return fmt.Errorf("%v: %v is not in an object or a list", p, step)
		}
	}
	return nil
}

// Remove deletes the object key p ends in. A path ending in a list index
// sets that item to nil, so the list keeps its length and the other paths
// into it stay valid; both sides of a comparison then hold nil there.
// A path to nothing changes nothing.
func Remove(doc any, p Path) {
	if len(p) == 0 {
		return
	}
	parent, ok := Get(doc, p[:len(p)-1])
	if !ok {
		return
	}
	last := p[len(p)-1]
	switch node := parent.(type) {
	case map[string]any:
		delete(node, key(last))
	case []any:
		if i, ok := index(last, len(node)); ok {
			node[i] = nil
		}
	}
}
