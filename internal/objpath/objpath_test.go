package objpath

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

func doc() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "guestbook", "annotations": map[string]any{"a/b": "x", "c~d": "y"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"image": "nginx:1"}, map[string]any{"image": "redis:7"}}},
		"status":   "text",
	}
}

func TestPointer(t *testing.T) {
	for p, want := range map[string]Path{
		"":                           {},
		"/metadata/name":             {"metadata", "name"},
		"/metadata/annotations/a~1b": {"metadata", "annotations", "a/b"},
		"/metadata/annotations/c~0d": {"metadata", "annotations", "c~d"},
		"/spec/containers/1/image":   {"spec", "containers", "1", "image"},
		"/":                          {""},
	} {
		got, err := Pointer(p)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Pointer(%q) = %#v, %v; want %#v", p, got, err, want)
		}
	}
	if _, err := Pointer("metadata/name"); err == nil {
		t.Error("a pointer without its leading / was accepted")
	}
}

func TestGetSetRemove(t *testing.T) {
	for _, tc := range []struct {
		name    string
		path    Path
		get     any // nil: absent
		set     bool
		removed any // the parent after Remove
	}{
		{"a key", Path{"metadata", "name"}, "guestbook", true, nil},
		{"an escaped key", Path{"metadata", "annotations", "a/b"}, "x", true, nil},
		{"a list item by string", Path{"spec", "containers", "1", "image"}, "redis:7", true, nil},
		{"a list item by int", Path{"spec", "containers", 0, "image"}, "nginx:1", true, nil},
		{"a list item by jq's float", Path{"spec", "containers", float64(1)}, map[string]any{"image": "redis:7"}, true, nil},
		{"an index outside", Path{"spec", "containers", 2, "image"}, nil, false, nil},
		{"a negative index", Path{"spec", "containers", -1}, nil, false, nil},
		{"through a string", Path{"status", "phase"}, nil, false, nil},
		{"missing objects", Path{"spec", "template", "metadata"}, nil, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := doc()
			got, ok := Get(d, tc.path)
			if ok != (tc.get != nil) || !reflect.DeepEqual(got, tc.get) {
				t.Errorf("Get = %v, %v; want %v", got, ok, tc.get)
			}
			before := doc()
			err := Set(d, tc.path, "new")
			if (err == nil) != tc.set {
				t.Fatalf("Set: %v, want success %v", err, tc.set)
			}
			if err != nil {
				if !reflect.DeepEqual(d, before) {
					t.Errorf("a failed Set changed the document: %v", d)
				}
				return
			}
			if v, ok := Get(d, tc.path); !ok || v != "new" {
				t.Errorf("after Set, Get = %v, %v", v, ok)
			}
			Remove(d, tc.path)
			if v, ok := Get(d, tc.path); ok && v != nil {
				t.Errorf("after Remove, Get = %v", v)
			}
		})
	}
}

func TestRemoveKeepsListLength(t *testing.T) {
	d := doc()
	Remove(d, Path{"spec", "containers", "0"})
	list := d["spec"].(map[string]any)["containers"].([]any)
	if len(list) != 2 || list[0] != nil || list[1] == nil {
		t.Errorf("containers after removing the first: %v", list)
	}
	Remove(d, Path{"no", "such", "field"}) // changes nothing, does not panic
	Remove(d, Path{})
}

func TestJQ(t *testing.T) {
	paths, err := JQ(context.Background(), doc(), ".spec.containers[] | select(.image | startswith(\"redis\")) | .image", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Path{{"spec", "containers", 1, "image"}}; !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %#v, want %#v", paths, want)
	}
	if _, err := JQ(context.Background(), doc(), ".spec[", 0); err == nil {
		t.Error("a syntax error passed")
	}
}

// TestJQEnds proves that an expression looping forever, or yielding paths
// forever, ends with an error.
func TestJQEnds(t *testing.T) {
	_, err := JQ(context.Background(), doc(), ".spec | until(false; .)", 50*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("a looping expression: %v, want ErrTimeout", err)
	}
	if _, err := JQ(context.Background(), doc(), "repeat(.)", time.Minute); err == nil {
		t.Error("an expression yielding paths without end passed")
	}
}

func FuzzPointer(f *testing.F) {
	for _, seed := range []string{"", "/", "/metadata/name", "/spec/containers/1/image", "/a~1b/~0/-1", "/spec/containers/9/x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		path, err := Pointer(p)
		if err != nil {
			return
		}
		d := doc()
		_, _ = Get(d, path)
		if err := Set(d, path, "v"); err == nil && len(path) > 0 {
			if v, ok := Get(d, path); !ok || v != "v" {
				t.Fatalf("Set %q then Get = %v, %v", p, v, ok)
			}
		}
		Remove(d, path)
	})
}
