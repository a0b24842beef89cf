package script

import (
	"context"
	"reflect"
	"strings"
	"sync"
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

// TestSandboxReuse: a reused sandbox shows a run nothing an earlier run
// left behind, whatever that run changed.
func TestSandboxReuse(t *testing.T) {
	leave, err := Prepare(`
		hs = {status = "Degraded"}          -- a global, as health checks write them
		string.upper = function() return "changed" end
		table.insert = nil
		os.time = function() return 0 end
		getmetatable("").__index = {len = function() return -1 end}
		setmetatable(_G, {__index = function() return "anything" end})
		obj.spec.replicas = 0
		return hs`)
	if err != nil {
		t.Fatal(err)
	}
	look, err := Prepare(`
		return {hs = hs == nil, upper = string.upper("a"), insert = table.insert ~= nil,
			time = os.time() > 0, len = ("abc"):len(), missing = undefinedGlobal == nil, obj = obj.spec == nil}`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"hs": true, "upper": "A", "insert": true, "time": true, "len": int64(3), "missing": true, "obj": true}
	sb := newSandbox()
	defer sb.L.Close()
	obj := map[string]any{"spec": map[string]any{"replicas": int64(2)}}
	if _, err := sb.run(context.Background(), leave.proto, obj, nil); err != nil {
		t.Fatal(err)
	}
	sb.reset()
	got, err := sb.run(context.Background(), look.proto, nil, nil)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("after a run that changed the sandbox: %#v, %v; want %#v", got, err, want)
	}
	if obj["spec"].(map[string]any)["replicas"] != int64(2) {
		t.Errorf("a script changed the Go object it was given: %v", obj)
	}
	// Through the pool, from many goroutines at once (run with -race).
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := leave.Run(context.Background(), obj, nil); err != nil {
					t.Error(err)
				}
				if got, err := look.Run(context.Background(), nil, nil); err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("a pooled sandbox: %#v, %v", got, err)
				}
			}
		})
	}
	wg.Wait()
}
