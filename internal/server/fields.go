package server

import (
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// fieldSelection is Argo CD's fields= query parameter: comma-separated
// dotted paths of the answer to keep ("items.metadata.name" in a list,
// "result.application.status.sync" in a stream), or, after a leading
// '-', to leave out.
type fieldSelection struct {
	paths   map[string]bool
	exclude bool
	// key names the selection, for keeping its encodings.
	key string
}

// maxSelectedFields bounds the paths of one fields= parameter.
const maxSelectedFields = 256

// parseFields reads the fields= parameter of q; the zero selection keeps
// everything.
func parseFields(q url.Values) fieldSelection {
	raw := q.Get("fields")
	if raw == "" {
		return fieldSelection{}
	}
	sel := fieldSelection{paths: map[string]bool{}, key: raw}
	if rest, ok := strings.CutPrefix(raw, "-"); ok {
		raw, sel.exclude = rest, true
	}
	for i, p := range strings.Split(raw, ",") {
		if i == maxSelectedFields {
			break
		}
		sel.paths[p] = true
	}
	return sel
}

func (f fieldSelection) all() bool { return f.paths == nil }

// appListFields are the fields of an Application a list can select, by
// their path below items. Argo CD projects a list from this fixed table,
// not from the encoded object, and so does Capstan: a list of thousands
// is projected without encoding each Application whole first.
var appListFields = map[string]func(*v1alpha1.Application) any{
	"metadata.name":              func(a *v1alpha1.Application) any { return a.Name },
	"metadata.namespace":         func(a *v1alpha1.Application) any { return a.Namespace },
	"metadata.annotations":       func(a *v1alpha1.Application) any { return a.Annotations },
	"metadata.labels":            func(a *v1alpha1.Application) any { return a.Labels },
	"metadata.creationTimestamp": func(a *v1alpha1.Application) any { return a.CreationTimestamp },
	"metadata.deletionTimestamp": func(a *v1alpha1.Application) any { return a.DeletionTimestamp },
	"spec":                       func(a *v1alpha1.Application) any { return a.Spec },
	"spec.destination":           func(a *v1alpha1.Application) any { return a.Spec.Destination },
	"spec.project":               func(a *v1alpha1.Application) any { return a.Spec.Project },
	"spec.source":                func(a *v1alpha1.Application) any { return a.Spec.Source },
	"spec.sources":               func(a *v1alpha1.Application) any { return a.Spec.Sources },
	"spec.sourceHydrator":        func(a *v1alpha1.Application) any { return a.Spec.SourceHydrator },
	"spec.syncPolicy":            func(a *v1alpha1.Application) any { return a.Spec.SyncPolicy },
	"status.sourceHydrator":      func(a *v1alpha1.Application) any { return a.Status.SourceHydrator },
	"status.summary":             func(a *v1alpha1.Application) any { return a.Status.Summary },
	"status.sync.status":         func(a *v1alpha1.Application) any { return a.Status.Sync.Status },
	"status.sync.revision":       func(a *v1alpha1.Application) any { return a.Status.Sync.Revision },
	"status.health":              func(a *v1alpha1.Application) any { return a.Status.Health },
	"status.resources": func(a *v1alpha1.Application) any {
		if len(a.Status.Resources) == 0 {
			return nil
		}
		return a.Status.Resources
	},
	"status.operationState.startedAt":      opField(func(s *v1alpha1.OperationState) any { return s.StartedAt }),
	"status.operationState.finishedAt":     opField(func(s *v1alpha1.OperationState) any { return s.FinishedAt }),
	"status.operationState.phase":          opField(func(s *v1alpha1.OperationState) any { return s.Phase }),
	"status.operationState.operation.sync": opField(func(s *v1alpha1.OperationState) any { return s.SyncResult }),
	"operation.sync": func(a *v1alpha1.Application) any {
		if a.Operation == nil {
			return nil
		}
		return a.Operation.Sync
	},
}

// opField reads a field of the operation state, absent without one.
func opField(f func(*v1alpha1.OperationState) any) func(*v1alpha1.Application) any {
	return func(a *v1alpha1.Application) any {
		if a.Status.OperationState == nil {
			return nil
		}
		return f(a.Status.OperationState)
	}
}

// listedField is one field of appListFields a request selected.
type listedField struct {
	path  []string
	value func(*v1alpha1.Application) any
}

// listFields resolves the selection against appListFields once per
// request, in a fixed order; a field under another selected one is
// covered by it.
func (f fieldSelection) listFields() []listedField {
	selected := map[string]bool{}
	for name := range appListFields {
		if f.paths["items."+name] != f.exclude {
			selected[name] = true
		}
	}
	var out []listedField
	for name := range selected {
		parts := strings.Split(name, ".")
		covered := false
		for i := 1; i < len(parts); i++ {
			covered = covered || selected[strings.Join(parts[:i], ".")]
		}
		if !covered {
			out = append(out, listedField{path: parts, value: appListFields[name]})
		}
	}
	slices.SortFunc(out, func(a, b listedField) int { return slices.Compare(a.path, b.path) })
	return out
}

// projectApp encodes the listed fields of app that are set.
func projectApp(app *v1alpha1.Application, fields []listedField) ([]byte, error) {
	out := map[string]any{}
	for _, f := range fields {
		v := f.value(app)
		if isNil(v) {
			continue
		}
		m := out
		for _, p := range f.path[:len(f.path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[f.path[len(f.path)-1]] = v
	}
	return json.Marshal(out)
}

// isNil reports whether v is nil or holds a nil map, slice or pointer:
// fields that are not set are left out.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer:
		return r.IsNil()
	}
	return false
}

// filterJSON keeps the selected paths of a decoded JSON document (a
// stream's message): with exclude unset, a key stays when its path is
// selected or leads to a selected path; with exclude set, a key goes when
// its path is selected. Lists take their elements' keys at the list's
// own path.
func (f fieldSelection) filterJSON(path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			selected := f.paths[p]
			if f.exclude {
				if selected {
					delete(v, k)
					continue
				}
			} else if !selected && !f.leadsToSelected(p) {
				delete(v, k)
				continue
			}
			if !selected {
				f.filterJSON(p, child)
			}
		}
	case []any:
		for _, child := range v {
			f.filterJSON(path, child)
		}
	}
}

// leadsToSelected reports whether a selected path lies below p.
func (f fieldSelection) leadsToSelected(p string) bool {
	for s := range f.paths {
		if strings.HasPrefix(s, p+".") {
			return true
		}
	}
	return false
}
