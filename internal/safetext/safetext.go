// Package safetext holds what the templates users write in settings and
// resources run with: Sprig's functions without those that read the
// process's environment, resolve host names or cost seconds of CPU, with
// bounds on those that allocate what their arguments ask, and a buffer
// that bounds what one template may write. Deep links, ApplicationSet templates and
// notification templates all render with it, so a hostile template can
// neither read the server's secrets from its environment nor fill its
// memory.
package safetext

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// unsafeFuncs are Sprig's functions that reach outside the template's
// data (the process environment, DNS) or cost seconds of CPU a call (key
// and certificate generation, password hashing), which a template could
// call in a loop.
var unsafeFuncs = []string{"env", "expandenv", "getHostByName",
	"genPrivateKey", "derivePassword", "buildCustomCert", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey",
	"genSignedCert", "genSignedCertWithKey", "bcrypt", "htpasswd"}

// Bounds of Sprig's functions that allocate what their arguments ask
// before anything is written: a call asking for more fails.
const (
	// MaxString bounds a string a function makes (repeat, indent,
	// randAlphaNum and the like).
	MaxString = 1 << 20
	// MaxList bounds a list a function makes (until, untilStep, seq).
	MaxList = 100000
)

// Funcs returns a new copy of Sprig's text functions without the unsafe
// ones and with bounds on those that allocate; callers may add their own
// to it.
func Funcs() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range unsafeFuncs {
		delete(f, name)
	}
	for name, fn := range bounded(f) {
		f[name] = fn
	}
	return f
}

// bounded wraps the allocating functions of f with their bounds.
func bounded(f template.FuncMap) template.FuncMap {
	repeat := f["repeat"].(func(int, string) string)
	until := f["until"].(func(int) []int)
	untilStep := f["untilStep"].(func(int, int, int) []int)
	seq := f["seq"].(func(...int) string)
	indent := f["indent"].(func(int, string) string)
	nindent := f["nindent"].(func(int, string) string)
	out := template.FuncMap{
		"repeat": func(count int, s string) (string, error) {
			if err := checkString("repeat", count, len(s)); err != nil {
				return "", err
			}
			return repeat(count, s), nil
		},
		"until": func(count int) ([]int, error) {
			if err := checkList("until", count); err != nil {
				return nil, err
			}
			return until(count), nil
		},
		"untilStep": func(start, stop, step int) ([]int, error) {
			if err := checkList("untilStep", steps(start, stop, step)); err != nil {
				return nil, err
			}
			return untilStep(start, stop, step), nil
		},
		"seq": func(params ...int) (string, error) {
			n := 0
			switch len(params) {
			case 1:
				n = params[0]
			case 2:
				n = steps(params[0], params[1], 1)
			case 3:
				n = steps(params[0], params[2], params[1])
			}
			if err := checkList("seq", n); err != nil {
				return "", err
			}
			return seq(params...), nil
		},
		"indent": func(spaces int, s string) (string, error) {
			if err := checkString("indent", spaces, strings.Count(s, "\n")+1); err != nil {
				return "", err
			}
			return indent(spaces, s), nil
		},
		"nindent": func(spaces int, s string) (string, error) {
			if err := checkString("nindent", spaces, strings.Count(s, "\n")+1); err != nil {
				return "", err
			}
			return nindent(spaces, s), nil
		},
	}
	for _, name := range []string{"randAlphaNum", "randAlpha", "randNumeric", "randAscii"} {
		rnd := f[name].(func(int) string)
		out[name] = func(count int) (string, error) {
			if err := checkString(name, count, 1); err != nil {
				return "", err
			}
			return rnd(count), nil
		}
	}
	randBytes := f["randBytes"].(func(int) (string, error))
	out["randBytes"] = func(count int) (string, error) {
		if err := checkString("randBytes", count, 2); err != nil {
			return "", err
		}
		return randBytes(count)
	}
	return out
}

// checkString refuses a string of count pieces of size bytes over MaxString.
func checkString(fn string, count, size int) error {
	if count > 0 && size > 0 && count > MaxString/size {
		return fmt.Errorf("%s: the result would be over %d bytes", fn, MaxString)
	}
	return nil
}

// checkList refuses a list of more than MaxList items.
func checkList(fn string, n int) error {
	if n > MaxList {
		return fmt.Errorf("%s: the result would have over %d items", fn, MaxList)
	}
	return nil
}

// steps is how many items counting from start to stop by step makes, in
// floating point so that no difference overflows.
func steps(start, stop, step int) int {
	if step == 0 {
		return 0
	}
	n := (float64(stop) - float64(start)) / float64(step)
	switch {
	case n < 0:
		return 0
	case n >= MaxList:
		return MaxList + 1
	}
	return int(n) + 1
}

// Buffer is a bytes.Buffer that refuses writes past Max bytes, so a
// template that loops or repeats cannot grow without bound.
type Buffer struct {
	bytes.Buffer
	// Max is the most bytes the buffer holds.
	Max int
	// What names the output in the error, e.g. "the link".
	What string
}

// Write appends p, or fails when that would pass Max.
func (b *Buffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.Max {
		what := b.What
		if what == "" {
			what = "the output"
		}
		return 0, fmt.Errorf("%s is longer than %d bytes", what, b.Max)
	}
	return b.Buffer.Write(p)
}

// Execute runs t over data into a Buffer of at most max bytes.
func Execute(t *template.Template, data any, max int, what string) (string, error) {
	buf := &Buffer{Max: max, What: what}
	if err := t.Execute(buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}
