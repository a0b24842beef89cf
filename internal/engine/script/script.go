// Package script runs argocd-cm's Lua customizations (health checks,
// resource actions) as Argo CD runs them: the object as the global obj,
// the base, table, string and math libraries and a safe os library
// (time, date and clock, also through require("os")), nothing that
// reaches files or programs, and a bounded run time.
//
//	ret, err := script.Run(ctx, src, obj.Object, nil)   // the value the script returns
//	v := script.ToGo(ret)                                // maps, lists, strings, numbers, booleans
package script

import (
	"context"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Timeout bounds one run; a loop that never ends is an error.
var Timeout = 5 * time.Second

// Compile checks that src is valid Lua.
func Compile(src string) error {
	_, err := Prepare(src)
	return err
}

// Program is a script compiled once, to run many times: the built-in
// health checks run on every reconcile.
type Program struct {
	proto *lua.FunctionProto
}

// Prepare compiles src.
func Prepare(src string) (*Program, error) {
	chunk, err := parse.Parse(strings.NewReader(src), "<script>")
	if err != nil {
		return nil, err
	}
	proto, err := lua.Compile(chunk, "<script>")
	if err != nil {
		return nil, err
	}
	return &Program{proto: proto}, nil
}

// Run runs src with obj as the global obj and globals set beside it, and
// returns what it returned, converted by ToGo; nil when it returned
// nothing.
func Run(ctx context.Context, src string, obj map[string]any, globals map[string]any) (any, error) {
	p, err := Prepare(src)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, obj, globals)
}

// Run runs the program as the function Run does, in a sandbox no other
// run holds: sandboxes are reused, with whatever a run left in them put
// back as it was.
func (p *Program) Run(ctx context.Context, obj map[string]any, globals map[string]any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	sb := sandboxes.Get().(*sandbox)
	ret, err := sb.run(ctx, p.proto, obj, globals)
	if err != nil {
		// A run that failed, or was stopped, may have left the state half
		// way through a call: it is dropped rather than reused.
		sb.L.Close()
		return nil, err
	}
	sb.reset()
	sandboxes.Put(sb)
	return ret, nil
}

// toLua converts a JSON-like value to Lua: maps to tables, lists to
// 1-indexed tables.
func toLua(L *lua.LState, v any) lua.LValue {
	switch t := v.(type) {
	case map[string]any:
		tbl := L.NewTable()
		for k, val := range t {
			tbl.RawSetString(k, toLua(L, val))
		}
		return tbl
	case []any:
		tbl := L.NewTable()
		for _, val := range t {
			tbl.Append(toLua(L, val))
		}
		return tbl
	case string:
		return lua.LString(t)
	case bool:
		return lua.LBool(t)
	case int64:
		return lua.LNumber(t)
	case int:
		return lua.LNumber(t)
	case float64:
		return lua.LNumber(t)
	default:
		return lua.LNil
	}
}

// ToGo converts a Lua value to JSON-like Go: a table whose keys are 1..n
// to a list, any other table to a map (an empty one to an empty map),
// whole numbers to int64.
func ToGo(v lua.LValue) any {
	switch t := v.(type) {
	case *lua.LTable:
		if n := t.Len(); n > 0 && countKeys(t) == n {
			out := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				out = append(out, ToGo(t.RawGetInt(i)))
			}
			return out
		}
		out := map[string]any{}
		t.ForEach(func(k, val lua.LValue) {
			out[k.String()] = ToGo(val)
		})
		return out
	case lua.LString:
		return string(t)
	case lua.LBool:
		return bool(t)
	case lua.LNumber:
		if f := float64(t); f == float64(int64(f)) {
			return int64(f)
		}
		return float64(t)
	default:
		return nil
	}
}

func countKeys(t *lua.LTable) int {
	n := 0
	t.ForEach(func(lua.LValue, lua.LValue) { n++ })
	return n
}
