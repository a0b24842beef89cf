package applicationset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/objpath"
)

// Action is what the controller did to one generated Application.
type Action string

// The actions, as logged and counted.
const (
	ActionCreated   Action = "created"
	ActionUpdated   Action = "updated"
	ActionDeleted   Action = "deleted"
	ActionUnchanged Action = "unchanged"
	// ActionSkipped: the policy forbade the change.
	ActionSkipped Action = "skipped"
)

// Change is one Application and what was done to it.
type Change struct {
	Name   string
	Action Action
}

// defaultPreservedAnnotations are annotations of generated Applications
// that others set and the controller keeps, as Argo CD's does.
var defaultPreservedAnnotations = []string{
	"notified.notifications.argoproj.io",
	v1alpha1.AnnotationRefresh,
	"argocd.argoproj.io/hydrate",
}

// applier writes generated Applications.
type applier struct {
	client client.Client
	as     *v1alpha1.ApplicationSet
	policy v1alpha1.ApplicationsSyncPolicy
	// preservedLabels and preservedAnnotations are kept as found.
	preservedLabels, preservedAnnotations []string
	dryRun                                bool
}

// apply creates or updates one desired Application; have is the live one
// of that name, if any.
func (a *applier) apply(ctx context.Context, want, have *v1alpha1.Application) (Action, error) {
	if have == nil {
		if a.dryRun {
			return ActionCreated, nil
		}
		if err := a.client.Create(ctx, want); err != nil {
			return "", fmt.Errorf("creating Application/%s/%s: %w", want.Namespace, want.Name, err)
		}
		return ActionCreated, nil
	}
	if ref := controllerOf(have); ref != nil && ref.UID != a.as.UID {
		return "", fmt.Errorf("another %s controller, %s, already owns Application/%s/%s", ref.Kind, ref.Name, have.Namespace, have.Name)
	}
	if !a.policy.AllowUpdate() && controllerOf(have) != nil {
		return ActionSkipped, nil
	}
	next, err := a.merged(ctx, want, have)
	if err != nil {
		return "", err
	}
	// A rollout's sync, unless one is already under way.
	sync := want.Operation != nil && have.Operation == nil
	if !sync && equality.Semantic.DeepEqual(next.Spec, have.Spec) && equality.Semantic.DeepEqual(next.ObjectMeta, have.ObjectMeta) {
		return ActionUnchanged, nil
	}
	if a.dryRun {
		return ActionUpdated, nil
	}
	// A JSON patch of metadata and spec: the application controller
	// writes status often, and a patch does not race it.
	ops := []map[string]any{
		{"op": "add", "path": "/metadata/labels", "value": orEmpty(next.Labels)},
		{"op": "add", "path": "/metadata/annotations", "value": orEmpty(next.Annotations)},
		{"op": "add", "path": "/metadata/finalizers", "value": orEmptyList(next.Finalizers)},
		{"op": "add", "path": "/metadata/ownerReferences", "value": next.OwnerReferences},
		{"op": "add", "path": "/spec", "value": next.Spec},
	}
	if sync {
		ops = append(ops, map[string]any{"op": "add", "path": "/operation", "value": want.Operation})
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return "", err
	}
	if err := a.client.Patch(ctx, have, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return "", fmt.Errorf("updating Application/%s/%s: %w", have.Namespace, have.Name, err)
	}
	return ActionUpdated, nil
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func orEmptyList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// merged is have turned into want: want's metadata and spec, except the
// preserved labels and annotations, post-delete finalizers and the fields
// ignoreApplicationDifferences names, which keep have's values.
func (a *applier) merged(ctx context.Context, want, have *v1alpha1.Application) (*v1alpha1.Application, error) {
	next := have.DeepCopy()
	next.Spec = *want.Spec.DeepCopy()
	next.Labels = keep(want.Labels, have.Labels, a.preservedLabels)
	next.Annotations = keep(want.Annotations, have.Annotations, append(a.preservedAnnotations, defaultPreservedAnnotations...))
	next.Finalizers = append([]string(nil), want.Finalizers...)
	for _, f := range have.Finalizers {
		if strings.HasPrefix(f, postDeleteFinalizerPrefix) && !slices.Contains(next.Finalizers, f) {
			next.Finalizers = append(next.Finalizers, f)
		}
	}
	next.OwnerReferences = want.OwnerReferences
	if err := a.keepIgnored(ctx, next, have); err != nil {
		return nil, err
	}
	return next, nil
}

// keep returns want with the listed keys of have added.
func keep(want, have map[string]string, keys []string) map[string]string {
	out := map[string]string{}
	for k, v := range want {
		out[k] = v
	}
	for _, k := range keys {
		if v, ok := have[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// keepIgnored puts have's values back into next wherever a rule of
// spec.ignoreApplicationDifferences that applies to the Application points.
func (a *applier) keepIgnored(ctx context.Context, next, have *v1alpha1.Application) error {
	var pointers, jq []string
	for _, rule := range a.as.Spec.IgnoreApplicationDifferences {
		if rule.Name == "" || rule.Name == have.Name {
			pointers = append(pointers, rule.JSONPointers...)
			jq = append(jq, rule.JQPathExpressions...)
		}
	}
	if len(pointers) == 0 && len(jq) == 0 {
		return nil
	}
	var nextDoc, haveDoc map[string]any
	if err := roundTrip(next, &nextDoc); err != nil {
		return err
	}
	if err := roundTrip(have, &haveDoc); err != nil {
		return err
	}
	var paths []objpath.Path
	for _, p := range pointers {
		path, err := objpath.Pointer(p)
		if err != nil {
			return fmt.Errorf("ignoreApplicationDifferences: %w", err)
		}
		paths = append(paths, path)
	}
	for _, expr := range jq {
		ps, err := jqPaths(ctx, expr, haveDoc, nextDoc)
		if err != nil {
			return fmt.Errorf("ignoreApplicationDifferences: %w", err)
		}
		paths = append(paths, ps...)
	}
	for _, p := range paths {
		if v, ok := objpath.Get(haveDoc, p); ok {
			_ = objpath.Set(nextDoc, p, v) // a path through a list item next lacks is left alone
		} else if len(p) > 0 && isKey(p[len(p)-1]) {
			objpath.Remove(nextDoc, p) // an item of a list next has is kept
		}
	}
	out := &v1alpha1.Application{}
	if err := roundTrip(nextDoc, out); err != nil {
		return err
	}
	*next = *out
	return nil
}

// isKey reports whether a path step is an object key, as a pointer's and
// a jq path's are, rather than a jq path's list index.
func isKey(step any) bool {
	_, ok := step.(string)
	return ok
}

// jqPaths returns the paths a jq path expression selects in either
// document. An expression failing on one document selects nothing there
// (a field one of them lacks); a syntax error or one running out of time
// is an error.
func jqPaths(ctx context.Context, expr string, docs ...map[string]any) ([]objpath.Path, error) {
	var out []objpath.Path
	for _, doc := range docs {
		paths, err := objpath.JQ(ctx, doc, expr, objpath.JQTimeout)
		if errors.Is(err, objpath.ErrTimeout) || errors.Is(err, objpath.ErrSyntax) {
			return nil, err
		}
		out = append(out, paths...)
	}
	return out, nil
}

// remove deletes an Application no longer generated; with
// preserveResourcesOnDeletion its resources finalizer goes first, so what
// it deployed stays.
func (a *applier) remove(ctx context.Context, app *v1alpha1.Application) (Action, error) {
	if !a.policy.AllowDelete() {
		return ActionSkipped, nil
	}
	if a.dryRun {
		return ActionDeleted, nil
	}
	if preserveResources(a.as) && hasResourcesFinalizer(app.Finalizers) {
		var kept []string
		for _, f := range app.Finalizers {
			if !hasResourcesFinalizer([]string{f}) {
				kept = append(kept, f)
			}
		}
		patch, _ := json.Marshal([]map[string]any{
			{"op": "test", "path": "/metadata/resourceVersion", "value": app.ResourceVersion},
			{"op": "add", "path": "/metadata/finalizers", "value": orEmptyList(kept)},
		})
		if err := a.client.Patch(ctx, app, client.RawPatch(types.JSONPatchType, patch)); err != nil {
			return "", fmt.Errorf("removing the resources finalizer of Application/%s/%s: %w", app.Namespace, app.Name, err)
		}
	}
	if err := a.client.Delete(ctx, app); err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("deleting Application/%s/%s: %w", app.Namespace, app.Name, err)
	}
	return ActionDeleted, nil
}
