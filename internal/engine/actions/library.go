package actions

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	argocdcustomizations "github.com/argoproj/argo-cd/v3/resource_customizations"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/internal/engine/script"
)

// The built-in actions are the ones Argo CD ships as data in its Go
// module: <group>/<Kind>/actions/discovery.lua lists a kind's actions and
// <group>/<Kind>/actions/<name>/action.lua runs one (a core kind's
// directory is <Kind> alone). Each script is compiled once.

// builtinLibrary is Argo CD's library, read and compiled on first use.
var builtinLibrary = sync.OnceValue(func() map[schema.GroupKind]scripts {
	return loadLibrary(argocdcustomizations.Embedded)
})

// actionsDir is the directory of a kind's actions, under its own.
const actionsDir = "actions"

// loadLibrary reads every kind's actions in fsys. A kind whose script
// cannot be read or compiled is kept, broken.
func loadLibrary(fsys fs.FS) map[schema.GroupKind]scripts {
	lib := map[schema.GroupKind]scripts{}
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".lua" {
			return nil // a directory that cannot be read leaves its kinds without actions
		}
		kindDir, name, ok := actionOfPath(p)
		if !ok {
			return nil
		}
		gk := groupKindOfDir(kindDir)
		s, seen := lib[gk]
		if !seen {
			s = scripts{source: "built-in " + kindDir, byName: map[string]*script.Program{}}
		}
		prog, err := readProgram(fsys, p)
		switch {
		case err != nil:
			s.broken = errors.Join(s.broken, fmt.Errorf("%s: %w", s.source, err))
		case name == "":
			s.discovery = prog
		default:
			s.byName[name] = prog
		}
		lib[gk] = s
		return nil
	})
	return lib
}

// actionOfPath reads a library path: the kind's directory and the
// action's name, "" for the discovery script; ok is false for other files.
func actionOfPath(p string) (kindDir, name string, ok bool) {
	if dir, found := strings.CutSuffix(p, "/"+actionsDir+"/discovery.lua"); found {
		return dir, "", true
	}
	rest, found := strings.CutSuffix(p, "/action.lua")
	if !found {
		return "", "", false
	}
	dir, name := path.Split(rest)
	kindDir, found = strings.CutSuffix(dir, "/"+actionsDir+"/")
	return kindDir, name, found && name != ""
}

// groupKindOfDir is the kind a library directory is for: <group>/<Kind>,
// or <Kind> for the core group.
func groupKindOfDir(dir string) schema.GroupKind {
	group, kind := path.Split(dir)
	return schema.GroupKind{Group: strings.TrimSuffix(group, "/"), Kind: kind}
}

func readProgram(fsys fs.FS, p string) (*script.Program, error) {
	src, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	prog, err := script.Prepare(string(src))
	if err != nil {
		return nil, fmt.Errorf("%s does not compile: %w", path.Base(path.Dir(p)), err)
	}
	return prog, nil
}
