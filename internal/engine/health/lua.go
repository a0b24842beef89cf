package health

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gobwas/glob"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
)

// luaTimeout bounds one script run; a loop that never ends is an error.
var luaTimeout = 5 * time.Second

// customCheck is a Lua health script for kinds matching group/kind globs.
type customCheck struct {
	key    string
	group  glob.Glob
	kind   glob.Glob
	script string
	// broken is why the script cannot run (it does not compile): the
	// kinds it is for are Unknown with this error, and no others suffer.
	broken error
}

// parseCustomChecks reads argocd-cm's custom health checks (see
// settings.ArgoCD.Customizations; "*" globs allowed in group and kind). A
// key that cannot be read is named in the error and affects only its
// kinds: a script that does not compile makes them Unknown.
func parseCustomChecks(cm map[string]string) ([]customCheck, error) {
	custom, err := (&settings.ArgoCD{Data: cm}).Customizations("health")
	errs := []error{err}
	var checks []customCheck
	for _, c := range custom {
		if err := addCheck(&checks, c); err != nil {
			errs = append(errs, err)
		}
	}
	return checks, errors.Join(errs...)
}

// addCheck adds the check of one customization. A script that does not
// compile is still added, broken, so that its kinds report the error.
func addCheck(checks *[]customCheck, c settings.Customization) error {
	gg, err := glob.Compile(c.Group)
	if err != nil {
		return fmt.Errorf("argocd-cm %s: group %q: %w", c.Key, c.Group, err)
	}
	kg, err := glob.Compile(c.Kind)
	if err != nil {
		return fmt.Errorf("argocd-cm %s: kind %q: %w", c.Key, c.Kind, err)
	}
	check := customCheck{key: c.Key, group: gg, kind: kg, script: c.Value}
	if _, err := compileLua(c.Value); err != nil {
		check.broken = fmt.Errorf("argocd-cm %s: %w", c.Key, err)
	}
	*checks = append(*checks, check)
	return check.broken
}

func (c *Checker) customFor(gk schema.GroupKind) (customCheck, bool) {
	for _, check := range c.custom {
		if check.group.Match(gk.Group) && check.kind.Match(gk.Kind) {
			return check, true
		}
	}
	return customCheck{}, false
}

func compileLua(script string) (*lua.LFunction, error) {
	L := lua.NewState()
	defer L.Close()
	fn, err := L.LoadString(script)
	if err != nil {
		return nil, fmt.Errorf("health.lua does not compile: %w", err)
	}
	return fn, nil
}

// newSandbox is a Lua state with only the base, table, string and math
// libraries, and no way to reach files or run programs.
func newSandbox(ctx context.Context) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, unsafe := range []string{"dofile", "loadfile", "load", "loadstring", "require", "module"} {
		L.SetGlobal(unsafe, lua.LNil)
	}
	L.SetContext(ctx)
	return L
}

// run executes the script with the object as the global obj, as Argo CD's
// contract says, and reads the returned {status, message} table.
func (c customCheck) run(obj *unstructured.Unstructured) (Status, error) {
	if c.broken != nil {
		return Status{}, c.broken
	}
	ctx, cancel := context.WithTimeout(context.Background(), luaTimeout)
	defer cancel()
	L := newSandbox(ctx)
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj.Object))
	if err := L.DoString(c.script); err != nil {
		return Status{}, fmt.Errorf("%s: %w", c.key, err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return Status{}, fmt.Errorf("%s: the script must return a table with status and message", c.key)
	}
	st := Status{
		Status:  v1alpha1.HealthStatusCode(lua.LVAsString(ret.RawGetString("status"))),
		Message: lua.LVAsString(ret.RawGetString("message")),
	}
	if _, known := order[st.Status]; !known {
		return Status{}, fmt.Errorf("%s: returned status %q, want one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown", c.key, st.Status)
	}
	return st, nil
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
