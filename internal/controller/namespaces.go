package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
)

// appNamespaces are the namespaces whose Applications the controller
// reconciles: the control namespace, and those --application-namespaces
// names (globs), as Argo CD's "apps in any namespace".
type appNamespaces struct {
	control string
	globs   []string
}

func (a appNamespaces) allowed(ns string) bool {
	return ns == a.control || project.MatchesAny(a.globs, ns, false)
}

// any reports whether Applications outside the control namespace count.
func (a appNamespaces) any() bool { return len(a.globs) > 0 }

// list returns the Applications of every allowed namespace, from the
// cache and uncopied: callers only read them.
func (a appNamespaces) list(ctx context.Context, r client.Reader) ([]v1alpha1.Application, error) {
	var list v1alpha1.ApplicationList
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if !a.any() {
		opts = append(opts, client.InNamespace(a.control))
	}
	if err := r.List(ctx, &list, opts...); err != nil {
		return nil, err
	}
	out := list.Items[:0]
	for _, app := range list.Items {
		if a.allowed(app.Namespace) {
			out = append(out, app)
		}
	}
	return out, nil
}

// predicate passes events of Applications in allowed namespaces only.
func (a appNamespaces) predicate() predicate.Funcs {
	ok := func(o client.Object) bool { return a.allowed(o.GetNamespace()) }
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return ok(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return ok(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return ok(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return ok(e.Object) },
	}
}
