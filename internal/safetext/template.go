package safetext

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"text/template"
	"text/template/parse"
)

// Budget is how many bytes one execution with output bound max may build
// in all its function calls, range iterations and template invocations
// together: 16 times max.
func Budget(max int) int { return 16 * max }

// Template is a parsed template whose function calls are metered. Its
// executions run one at a time.
type Template struct {
	mu sync.Mutex
	t  *template.Template
	// cur is the running execution's budget (under mu).
	cur *budget
}

// options are the text/template options a template may ask for; any
// other is an error (text/template panics on them).
var options = map[string]bool{"missingkey=default": true, "missingkey=invalid": true, "missingkey=zero": true, "missingkey=error": true}

// Parse parses text as template name with Funcs and extra (a caller's own
// functions, each metered as building at most a few times what it is
// given), and text/template options ("missingkey=error").
func Parse(name, text string, extra template.FuncMap, opts ...string) (*Template, error) {
	for _, o := range opts {
		if !options[o] {
			return nil, fmt.Errorf("template option %q: want one of missingkey=default, invalid, zero or error", o)
		}
	}
	t := template.New(name).Option(opts...).Funcs(sprigFuncs)
	if extra != nil {
		t.Funcs(extra)
	}
	if _, err := t.Parse(text); err != nil {
		return nil, err
	}
	tm := &Template{t: t}
	instrument(t)
	metered := tm.instruments()
	for fn := range usedFuncs(t) {
		for _, set := range []template.FuncMap{extra, sprigFuncs, builtins} {
			if impl, ok := set[fn]; ok {
				metered[fn] = tm.meter(fn, impl)
				break
			}
		}
	}
	t.Funcs(metered)
	return tm, nil
}

// Must is Parse's template, or a panic: for templates the program holds.
func Must(t *Template, err error) *Template {
	if err != nil {
		panic(err)
	}
	return t
}

// Execute runs the template over data, writing at most max bytes (what
// names the output in the error) and building at most Budget(max).
func (t *Template) Execute(data any, max int, what string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cur = newBudget(max)
	defer func() { t.cur = nil }()
	buf := &Buffer{Max: max, What: what}
	if err := t.t.Execute(buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// usedFuncs are the names a template set calls: only those are metered.
func usedFuncs(t *template.Template) map[string]bool {
	used := map[string]bool{}
	eachNode(t, func(n parse.Node) {
		if id, ok := n.(*parse.IdentifierNode); ok {
			used[id.Ident] = true
		}
	})
	return used
}

// Calls Parse adds to a template's ranges and template invocations, so
// that each iteration and each invocation is charged too: a loop over a
// number or a recursive template builds nothing a function meters, yet
// costs memory and time.
const (
	rangeFunc = "__safetext_range"
	stepFunc  = "__safetext_step"
)

// perIteration is charged for each item a range goes over.
const perIteration = 64

// instrument pipes every range's value through rangeFunc and every
// template invocation's through stepFunc.
func instrument(t *template.Template) {
	call := func(pos parse.Pos, name string) *parse.CommandNode {
		return &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{parse.NewIdentifier(name).SetPos(pos)}}
	}
	eachNode(t, func(n parse.Node) {
		switch n := n.(type) {
		case *parse.RangeNode:
			n.Pipe.Cmds = append(n.Pipe.Cmds, call(n.Pos, rangeFunc))
		case *parse.TemplateNode:
			if n.Pipe == nil {
				n.Pipe = &parse.PipeNode{NodeType: parse.NodePipe, Pos: n.Pos, Line: n.Line}
			}
			n.Pipe.Cmds = append(n.Pipe.Cmds, call(n.Pos, stepFunc))
		}
	})
}

// instruments are rangeFunc and stepFunc, charging t's execution.
func (t *Template) instruments() template.FuncMap {
	return template.FuncMap{
		rangeFunc: func(v any) (any, error) {
			items := max(count(v), toInt(v))
			return v, t.budget().spend("range", items*perIteration+callCost)
		},
		stepFunc: func(v ...any) (any, error) {
			var dot any
			if len(v) > 0 {
				dot = v[len(v)-1]
			}
			return dot, t.budget().take("template", callCost)
		},
	}
}

// budget is the running execution's budget (a fresh one outside Execute).
func (t *Template) budget() *budget {
	if t.cur == nil {
		return newBudget(0)
	}
	return t.cur
}

// eachNode calls fn with every node of every template of t's set.
func eachNode(t *template.Template, fn func(parse.Node)) {
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		if n == nil || reflect.ValueOf(n).IsNil() {
			return
		}
		fn(n)
		switch n := n.(type) {
		case *parse.ListNode:
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.IfNode:
			walkBranch(walk, &n.BranchNode)
		case *parse.RangeNode:
			walkBranch(walk, &n.BranchNode)
		case *parse.WithNode:
			walkBranch(walk, &n.BranchNode)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walk(tt.Tree.Root)
		}
	}
}

func walkBranch(walk func(parse.Node), b *parse.BranchNode) {
	walk(b.Pipe)
	walk(b.List)
	walk(b.ElseList)
}

// budget is what an execution may still build.
type budget struct{ left, total int }

func newBudget(max int) *budget { return &budget{left: Budget(max), total: Budget(max)} }

// errBudget marks a call refused for what it would build.
var errBudget = errors.New("the template builds too much")

// take charges n bytes to fn's call, or refuses it: one call builds at
// most MaxString.
func (b *budget) take(fn string, n int) error {
	if n > MaxString {
		return fmt.Errorf("%s: %w: the result would be over %d bytes", fn, errBudget, MaxString)
	}
	return b.spend(fn, n)
}

// spend charges n bytes to the execution, or refuses.
func (b *budget) spend(fn string, n int) error {
	if n > b.left {
		return fmt.Errorf("%s: %w: it has built more than %d bytes, 16 times its output bound", fn, errBudget, b.total)
	}
	b.left -= n
	return nil
}

var errorType = reflect.TypeFor[error]()

// meter wraps fn so that each call is charged to the running execution:
// what its arguments say it would build before it runs (see costs), and
// whatever it built beyond that after. The wrapper returns an error
// beside fn's result, which text/template reports.
func (t *Template) meter(name string, fn any) any {
	v := reflect.ValueOf(fn)
	typ := v.Type()
	if typ.Kind() != reflect.Func || typ.NumOut() == 0 || typ.NumOut() > 2 {
		return fn
	}
	ins := make([]reflect.Type, typ.NumIn())
	for i := range ins {
		ins[i] = typ.In(i)
	}
	outs := []reflect.Type{typ.Out(0), errorType}
	cost := costOf(name)
	wrapper := reflect.FuncOf(ins, outs, typ.IsVariadic())
	return reflect.MakeFunc(wrapper, func(args []reflect.Value) []reflect.Value {
		fail := func(err error) []reflect.Value {
			return []reflect.Value{reflect.Zero(outs[0]), reflect.ValueOf(&err).Elem()}
		}
		b := t.budget()
		flat := flatten(args, typ.IsVariadic())
		want, err := cost(flat)
		if err == nil {
			err = b.take(name, want)
		}
		if err != nil {
			return fail(err)
		}
		var res []reflect.Value
		if typ.IsVariadic() {
			res = v.CallSlice(args)
		} else {
			res = v.Call(args)
		}
		if len(res) == 2 && !res[1].IsNil() {
			return res
		}
		if built := sizeOf(res[0].Interface(), b.left+want); built > want {
			if err := b.take(name, built-want); err != nil {
				return fail(err)
			}
		}
		return []reflect.Value{res[0], reflect.Zero(errorType)}
	}).Interface()
}

// flatten turns a call's arguments into values, the variadic ones
// spread.
func flatten(args []reflect.Value, variadic bool) []any {
	out := make([]any, 0, len(args))
	for i, a := range args {
		if variadic && i == len(args)-1 {
			for j := 0; j < a.Len(); j++ {
				out = append(out, a.Index(j).Interface())
			}
			continue
		}
		out = append(out, a.Interface())
	}
	return out
}

// builtins are text/template's functions that build strings from their
// arguments, metered like Sprig's.
var builtins = template.FuncMap{
	"print":    fmt.Sprint,
	"printf":   fmt.Sprintf,
	"println":  fmt.Sprintln,
	"html":     template.HTMLEscaper,
	"js":       template.JSEscaper,
	"urlquery": template.URLQueryEscaper,
}
