package script

import (
	"context"
	"errors"
	"fmt"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// safeOs are the os functions a script may call.
var safeOs = []string{"time", "date", "clock"}

// sandboxes are idle sandboxes. Making one (its libraries, registry and
// call stack) costs more than most health checks take to run, and they
// run on every reconcile.
var sandboxes = sync.Pool{New: func() any { return newSandbox() }}

// sandbox is a Lua state with the libraries scripts may use, and what its
// shared tables held when it was made, to put them back after each run.
type sandbox struct {
	L *lua.LState
	// tables are the global table, each library table and the strings'
	// metatable, with their fields and metatables as made.
	tables []snapshot
}

// snapshot is a table's fields and metatable at one time.
type snapshot struct {
	table  *lua.LTable
	fields map[lua.LValue]lua.LValue
	meta   lua.LValue
}

func newSandbox() *sandbox {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.OsLibName, lua.OpenOs}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	full, _ := L.GetGlobal(lua.OsLibName).(*lua.LTable)
	os := L.NewTable()
	for _, name := range safeOs {
		os.RawSetString(name, full.RawGetString(name))
	}
	L.SetGlobal(lua.OsLibName, os)
	for _, unsafe := range []string{"dofile", "loadfile", "load", "loadstring", "module"} {
		L.SetGlobal(unsafe, lua.LNil)
	}
	L.SetGlobal("require", L.NewFunction(func(L *lua.LState) int {
		if name := L.CheckString(1); name != lua.OsLibName {
			L.RaiseError("module %q is not available", name)
		}
		L.Push(os)
		return 1
	}))
	sb := &sandbox{L: L}
	sb.remember(L.G.Global)
	L.G.Global.ForEach(func(_, v lua.LValue) {
		if t, ok := v.(*lua.LTable); ok && t != L.G.Global {
			sb.remember(t)
		}
	})
	if t, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		sb.remember(t)
	}
	return sb
}

// remember adds t's fields and metatable as they are now to what reset
// puts back.
func (sb *sandbox) remember(t *lua.LTable) {
	s := snapshot{table: t, fields: map[lua.LValue]lua.LValue{}, meta: sb.L.GetMetatable(t)}
	t.ForEach(func(k, v lua.LValue) { s.fields[k] = v })
	sb.tables = append(sb.tables, s)
}

// run runs proto with obj as the global obj and globals beside it, until
// ctx ends.
func (sb *sandbox) run(ctx context.Context, proto *lua.FunctionProto, obj map[string]any, globals map[string]any) (any, error) {
	L := sb.L
	L.SetContext(ctx)
	L.SetGlobal("obj", toLua(L, obj))
	for k, v := range globals {
		L.SetGlobal(k, toLua(L, v))
	}
	top := L.GetTop()
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Type == lua.ApiErrorRun {
			// The stack trace names Capstan's internals, not the script's lines.
			return nil, fmt.Errorf("%v", apiErr.Object)
		}
		return nil, err
	}
	if L.GetTop() == top {
		return nil, nil
	}
	return ToGo(L.Get(-1)), nil
}

// reset puts the sandbox back as it was made: the stack emptied, globals a
// run set removed, and library fields or metatables it changed restored.
// A script's later runs see nothing of an earlier one's, as with a fresh
// state.
func (sb *sandbox) reset() {
	L := sb.L
	L.SetTop(0)
	L.RemoveContext()
	for _, s := range sb.tables {
		var extra []lua.LValue
		s.table.ForEach(func(k, v lua.LValue) {
			if _, ok := s.fields[k]; !ok {
				extra = append(extra, k)
			}
		})
		for _, k := range extra {
			s.table.RawSet(k, lua.LNil)
		}
		for k, v := range s.fields {
			if s.table.RawGet(k) != v {
				s.table.RawSet(k, v)
			}
		}
		if L.GetMetatable(s.table) != s.meta {
			L.SetMetatable(s.table, s.meta)
		}
	}
}
