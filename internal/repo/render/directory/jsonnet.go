package directory

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

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
	vm.Importer(&boundedImporter{root: realRoot, jpaths: jpaths})
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

// maxJsonnetImport bounds one file a Jsonnet program imports.
const maxJsonnetImport = 8 << 20

// boundedImporter finds imports as Jsonnet's file importer does (beside
// the importing file, then the library paths, the last first) and reads
// only regular files inside the checkout, of at most maxJsonnetImport
// bytes: a link out of the checkout, a device or a FIFO is refused before
// anything is read from it.
type boundedImporter struct {
	root   string
	jpaths []string
	cache  map[string]jsonnet.Contents
}

func (b *boundedImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	if filepath.IsAbs(importedPath) {
		return jsonnet.Contents{}, "", fmt.Errorf("%w: import %q", pathsafe.ErrOutOfBounds, importedPath)
	}
	dirs := []string{filepath.Dir(importedFrom)}
	for i := len(b.jpaths) - 1; i >= 0; i-- {
		dirs = append(dirs, b.jpaths[i])
	}
	for _, dir := range dirs {
		foundAt := filepath.Join(dir, importedPath)
		if c, ok := b.cache[foundAt]; ok {
			return c, foundAt, nil
		}
		data, err := b.read(foundAt, importedPath)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return jsonnet.Contents{}, "", err
		}
		if b.cache == nil {
			b.cache = map[string]jsonnet.Contents{}
		}
		b.cache[foundAt] = jsonnet.MakeContentsRaw(data)
		return b.cache[foundAt], foundAt, nil
	}
	return jsonnet.Contents{}, "", fmt.Errorf("couldn't open import %q: no match locally or in the Jsonnet library paths", importedPath)
}

// read reads one candidate import after checking where it leads.
func (b *boundedImporter) read(path, importedPath string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	if !pathsafe.Within(b.root, resolved) {
		return nil, fmt.Errorf("%w: import %q", pathsafe.ErrOutOfBounds, importedPath)
	}
	f, err := os.OpenFile(resolved, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("import %q is not a regular file", importedPath)
	}
	if st.Size() > maxJsonnetImport {
		return nil, fmt.Errorf("import %q is %d bytes, over the limit of %d", importedPath, st.Size(), maxJsonnetImport)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxJsonnetImport+1))
	if err == nil && len(data) > maxJsonnetImport {
		err = fmt.Errorf("import %q is over the limit of %d bytes", importedPath, maxJsonnetImport)
	}
	return data, err
}
