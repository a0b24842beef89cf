package diff

import (
	"reflect"
	"testing"
)

func TestPointersAndPaths(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a/b": "1", "c~d": "2", "keep": "3"}},
		"spec":     map[string]any{"list": []any{"x", "y"}},
	}
	for _, p := range []string{"/metadata/annotations/a~1b", "/metadata/annotations/c~0d", "/spec/list/1", "/missing/path", "/spec/list/9"} {
		path, err := parsePointer(p)
		if err != nil {
			t.Fatal(err)
		}
		removePath(obj, path)
	}
	want := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"keep": "3"}},
		"spec":     map[string]any{"list": []any{"x", nil}},
	}
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("got %v, want %v", obj, want)
	}
	if _, err := parsePointer("no-slash"); err == nil {
		t.Error("pointer without a leading slash accepted")
	}
}
