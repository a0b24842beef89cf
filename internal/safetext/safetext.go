// Package safetext holds what the templates users write in settings and
// resources run with: Sprig's functions without those that read the
// process's environment or resolve host names, and a buffer that bounds
// what one template may write. Deep links, ApplicationSet templates and
// notification templates all render with it, so a hostile template can
// neither read the server's secrets from its environment nor fill its
// memory.
package safetext

import (
	"bytes"
	"fmt"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// unsafeFuncs are Sprig's functions that reach outside the template's
// data: the process environment and DNS.
var unsafeFuncs = []string{"env", "expandenv", "getHostByName"}

// Funcs returns a new copy of Sprig's text functions without the unsafe
// ones; callers may add their own to it.
func Funcs() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range unsafeFuncs {
		delete(f, name)
	}
	return f
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
