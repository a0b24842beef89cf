package health

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	argocdcustomizations "github.com/argoproj/argo-cd/v3/resource_customizations"
	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/script"
)

// The built-in health checks of custom resources are the ones Argo CD
// ships: the health.lua scripts its Go module publishes as data, one
// directory a group and kind (<group>/<Kind>/health.lua; "_" in a
// directory's name is any text, so _.crossplane.io/_ is every kind of
// every crossplane.io group). They run in the same sandbox as argocd-cm's
// scripts, each compiled once.

// libraryScript is one of them.
type libraryScript struct {
	dir     string // its directory in the library, for messages
	program *script.Program
	// broken is why it cannot run: its kinds are Unknown with this error.
	broken error
}

// library holds the scripts by group and kind, and those whose directory
// names are patterns in the order of their paths.
type library struct {
	exact    map[schema.GroupKind]libraryScript
	patterns []libraryPattern
}

type libraryPattern struct {
	group, kind *glob.Pattern
	libraryScript
}

// builtinLibrary is Argo CD's library, read and compiled on first use.
var builtinLibrary = sync.OnceValue(func() *library {
	return loadLibrary(argocdcustomizations.Embedded)
})

// loadLibrary reads every <group>/<Kind>/health.lua of fsys. A script
// that cannot be read or compiled is kept, broken.
func loadLibrary(fsys fs.FS) *library {
	paths, _ := fs.Glob(fsys, "*/*/health.lua") // the pattern is valid
	lib := &library{exact: map[schema.GroupKind]libraryScript{}}
	for _, p := range paths {
		dir := path.Dir(p)
		s := libraryScript{dir: dir}
		src, err := fs.ReadFile(fsys, p)
		if err == nil {
			s.program, err = script.Prepare(string(src))
		}
		if err != nil {
			s.broken = fmt.Errorf("built-in check %s: %w", dir, err)
		}
		group, kind := path.Split(dir)
		group = strings.TrimSuffix(group, "/")
		if !strings.Contains(dir, "_") {
			lib.exact[schema.GroupKind{Group: group, Kind: kind}] = s
			continue
		}
		// Directory names hold no glob syntax but "_", so both compile.
		gg := glob.MustCompile(strings.ReplaceAll(group, "_", "*"))
		kg := glob.MustCompile(strings.ReplaceAll(kind, "_", "*"))
		lib.patterns = append(lib.patterns, libraryPattern{group: gg, kind: kg, libraryScript: s})
	}
	return lib
}

// lookup returns the library's script for gk: the one of its own
// directory, else the first pattern matching it.
func (lib *library) lookup(gk schema.GroupKind) (libraryScript, bool) {
	if s, ok := lib.exact[gk]; ok {
		return s, true
	}
	for _, p := range lib.patterns {
		if p.group.Match(gk.Group) && p.kind.Match(gk.Kind) {
			return p.libraryScript, true
		}
	}
	return libraryScript{}, false
}

// run runs the script on obj and reads its {status, message}.
func (s libraryScript) run(obj *unstructured.Unstructured) (Status, error) {
	if s.broken != nil {
		return Status{}, s.broken
	}
	ret, err := s.program.Run(context.Background(), obj.Object, nil)
	if err != nil {
		return Status{}, fmt.Errorf("built-in check %s: %w", s.dir, err)
	}
	return statusOf(s.dir, ret)
}

// statusOf reads the {status, message} table a health script returned.
func statusOf(name string, ret any) (Status, error) {
	table, ok := ret.(map[string]any)
	if !ok {
		return Status{}, fmt.Errorf("%s: the script must return a table with status and message", name)
	}
	status, _ := table["status"].(string)
	message, _ := table["message"].(string)
	st := Status{Status: v1alpha1.HealthStatusCode(status), Message: message}
	if _, known := order[st.Status]; !known {
		return Status{}, fmt.Errorf("%s: returned status %q, want one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown", name, st.Status)
	}
	return st, nil
}
