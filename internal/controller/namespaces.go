package controller

import (
	"context"

	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/project"
)

// appNamespaces are the namespaces whose Applications the controller
// reconciles: the control namespace, and those --application-namespaces
// names (globs), as Argo CD's "apps in any namespace".
type appNamespaces struct {
	control string
	globs   []string
	// informers is the cache the Applications are read from, and index
	// its Applications as pointers, followed on first use.
	informers ctrlcache.Informers
	index     *kube.Index[*v1alpha1.Application]
}

func (a appNamespaces) allowed(ns string) bool {
	return ns == a.control || project.MatchesAny(a.globs, ns, false)
}

// any reports whether Applications outside the control namespace count.
func (a appNamespaces) any() bool { return len(a.globs) > 0 }

// list returns the Applications of every allowed namespace, the cache's
// own: callers only read them. (A cache's List would copy every one of
// them into a new slice: 15 MB each time at 10,000 Applications.)
func (a appNamespaces) list(ctx context.Context) ([]*v1alpha1.Application, error) {
	err := a.index.Follow(ctx, func() (kube.HandlerAdder, error) {
		return a.informers.GetInformer(ctx, &v1alpha1.Application{})
	})
	if err != nil {
		return nil, err
	}
	return a.index.List(func(app *v1alpha1.Application) bool { return a.allowed(app.Namespace) }), nil
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
