package script

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a", "b"}}}
	for src, want := range map[string]any{
		`return obj.spec.replicas + 1`:                         int64(3),
		`return obj.spec.list[2]`:                              "b",
		`return {a = 1, b = {}}`:                               map[string]any{"a": int64(1), "b": map[string]any{}},
		`return {"x", "y"}`:                                    []any{"x", "y"},
		`local os = require("os") return os.time() > 0`:        true,
		`return string.upper(os.date("!%Y", 0))`:               "1970",
		`return 1.5`:                                           1.5,
		`obj.spec.replicas = 0`:                                nil,
		`return actionParams and actionParams.n or "no param"`: "no param",
	} {
		got, err := Run(context.Background(), src, obj, nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v, %v; want %#v", src, got, err, want)
		}
	}
	if got, err := Run(context.Background(), `return n * 2`, nil, map[string]any{"n": int64(21)}); err != nil || got != int64(42) {
		t.Errorf("a global: %v, %v", got, err)
	}
	for src, want := range map[string]string{
		`os.exit(1)`:             "non-function",
		`io.write("x")`:          "non-table object",
		`require("io")`:          `module "io" is not available`,
		`loadstring("return")()`: "non-function",
		`error("stop here")`:     "stop here",
		`while true do end`:      "context deadline",
	} {
		old := Timeout
		Timeout = 100e6
		_, err := Run(context.Background(), src, nil, nil)
		Timeout = old
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", src, err, want)
		}
	}
}
