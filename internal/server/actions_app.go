package server

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/engine/actions"
)

// An Application has actions of its own (the built-in toggle-auto-sync,
// argocd-cm's for argoproj.io/Application): Argo CD's API lists and runs
// them when the resource a call names is the Application itself.

// isAppItself reports whether ref names app rather than an object of its
// tree.
func isAppItself(app *v1alpha1.Application, ref appstate.ResourceRef) bool {
	return ref.Group == v1alpha1.Group && ref.Kind == v1alpha1.ApplicationKind && ref.Name == app.Name
}

// appUnstructured is app as an action sees it.
func appUnstructured(app *v1alpha1.Application) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
	if err != nil {
		return nil, fmt.Errorf("reading Application/%s/%s: %w", app.Namespace, app.Name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(v1alpha1.ApplicationGVK)
	return u, nil
}

// appActions lists the actions offered on app itself.
func (s *Server) appActions(ctx context.Context, app *v1alpha1.Application) ([]actions.Action, error) {
	set, err := s.state.ActionSet(ctx)
	if err != nil {
		return nil, err
	}
	obj, err := appUnstructured(app)
	if err != nil {
		return nil, err
	}
	return set.For(ctx, obj)
}

// runAppAction runs an action on app itself and stores what it changed:
// the spec, labels and annotations, never its project (the caller's
// permission is for this project) nor its operation or status. An action
// that creates objects is refused here.
func (s *Server) runAppAction(ctx context.Context, c *caller, app *v1alpha1.Application, name string, params map[string]string) error {
	set, err := s.state.ActionSet(ctx)
	if err != nil {
		return err
	}
	const attempts = 10
	for attempt := 1; ; attempt++ {
		obj, err := appUnstructured(app)
		if err != nil {
			return err
		}
		res, err := set.Run(ctx, obj, name, params)
		if err != nil {
			return err
		}
		if len(res.Created) > 0 {
			return badRequest(fmt.Sprintf("action %s creates objects, which an action on the Application itself may not", name))
		}
		if res.Modified == nil {
			return nil
		}
		changed := &v1alpha1.Application{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(res.Modified.Object, changed); err != nil {
			return badRequest(fmt.Sprintf("action %s made an invalid Application: %v", name, err))
		}
		if changed.Spec.Project != app.Spec.Project {
			return badRequest(fmt.Sprintf("action %s may not move the Application to another project", name))
		}
		app.Spec, app.Labels, app.Annotations = changed.Spec, changed.Labels, changed.Annotations
		err = s.opts.Client.Update(ctx, app)
		if apierrors.IsConflict(err) && attempt < attempts {
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
			if err := s.opts.Client.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return withStatus(statusOf(err), fmt.Errorf("updating application %s: %w", app.Name, err))
		}
		s.audit(ctx, c, app, reasonActionRan, "ran action "+name)
		return nil
	}
}
