package directory

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-jsonnet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

// jsonnetVM evaluates Jsonnet programs with the source's variables and
// library paths, reading imports only from inside the checkout.
type jsonnetVM struct {
	vm *jsonnet.VM
}

func newJsonnetVM(root string, opts v1alpha1.ApplicationSourceJsonnet, env map[string]string) (*jsonnetVM, error) {
	vm := jsonnet.MakeVM()
	setVars(opts.ExtVars, env, vm.ExtVar, vm.ExtCode)
	setVars(opts.TLAs, env, vm.TLAVar, vm.TLACode)
	realRoot, err := pathsafe.Root(root)
	if err != nil {
		return nil, err
	}
	var jpaths []string
	for _, lib := range opts.Libs {
		p, err := pathsafe.Join(realRoot, lib)
		if err != nil {
			return nil, fmt.Errorf("directory.jsonnet.libs: %w", err)
		}
		jpaths = append(jpaths, p)
	}
	vm.Importer(&boundedImporter{root: realRoot, inner: &jsonnet.FileImporter{JPaths: jpaths}})
	return &jsonnetVM{vm: vm}, nil
}

// setVars passes variables to the VM, as strings or as code, with ${VAR}
// expanded from the build environment.
func setVars(vars []v1alpha1.JsonnetVar, env map[string]string, asString, asCode func(name, value string)) {
	for _, v := range vars {
		value := os.Expand(v.Value, func(k string) string { return env[k] })
		if v.Code {
			asCode(v.Name, value)
		} else {
			asString(v.Name, value)
		}
	}
}

func (j *jsonnetVM) evaluate(path, rel string) ([]*unstructured.Unstructured, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := j.vm.EvaluateAnonymousSnippet(path, string(src))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	// A program yields one object, a List, or an array of objects (nested
	// arrays are flattened, as Argo CD does).
	var value any
	if err := json.Unmarshal([]byte(out), &value); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	var objs []*unstructured.Unstructured
	var collect func(v any) error
	collect = func(v any) error {
		switch t := v.(type) {
		case []any:
			for _, item := range t {
				if err := collect(item); err != nil {
					return err
				}
			}
		case map[string]any:
			data, _ := json.Marshal(t)
			found, err := manifest.Parse(rel, data)
			if err != nil {
				return err
			}
			objs = append(objs, found...)
		case nil:
		default:
			return fmt.Errorf("%s: jsonnet output must be objects, got %T", rel, v)
		}
		return nil
	}
	if err := collect(value); err != nil {
		return nil, err
	}
	return objs, nil
}

// boundedImporter refuses imports that resolve outside the checkout.
type boundedImporter struct {
	root  string
	inner *jsonnet.FileImporter
}

func (b *boundedImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	contents, foundAt, err := b.inner.Import(importedFrom, importedPath)
	if err != nil {
		return contents, foundAt, err
	}
	abs, err := filepath.Abs(foundAt)
	if err != nil {
		return jsonnet.Contents{}, "", err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return jsonnet.Contents{}, "", err
	}
	if !pathsafe.Within(b.root, resolved) {
		return jsonnet.Contents{}, "", fmt.Errorf("%w: import %q", pathsafe.ErrOutOfBounds, importedPath)
	}
	return contents, foundAt, nil
}
