// Package safetext runs the templates users write in settings and
// resources: ApplicationSet templates, notification templates, deep links,
// the hydrator's and the image updater's commit messages and branches.
// They run with Sprig's functions, without those that read the process's
// environment, resolve host names or cost seconds of CPU a call, and every
// call of a function that builds something (a string, a list, a map) is
// metered: what it would build is reckoned from its arguments before it
// runs, and one execution may build at most a fixed multiple of its output
// bound (see Budget). A hostile template can thus neither read the
// server's secrets from its environment nor fill its memory, whether it
// writes what it builds or keeps it in variables.
//
//	t, err := safetext.Parse("greeting", `{{ .name | upper }}`, nil)
//	out, err := t.Execute(map[string]string{"name": "guestbook"}, 1024, "the greeting")
package safetext

import (
	"bytes"
	"fmt"
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

// Bounds of what one function call may build, whatever the output bound.
const (
	// MaxString bounds a string a function makes (repeat, printf, join,
	// replace and the like).
	MaxString = 1 << 20
	// MaxList bounds a list a function makes (until, untilStep, seq).
	MaxList = 100000
)

// sprigFuncs are Sprig's text functions without the unsafe ones.
var sprigFuncs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range unsafeFuncs {
		delete(f, name)
	}
	return f
}()

// Funcs returns a new copy of the functions templates run with: Sprig's
// safe ones. (Parse adds the metering; a template parsed with these alone
// and run by text/template itself is not metered.)
func Funcs() template.FuncMap {
	f := make(template.FuncMap, len(sprigFuncs))
	for name, fn := range sprigFuncs {
		f[name] = fn
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
