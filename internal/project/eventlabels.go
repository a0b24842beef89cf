package project

import (
	"cmp"
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
)

// EventLabels are the labels an Event recorded for the Application
// carries (settings.ArgoCD.EventLabels): none unless argocd-cm's
// resource.includeEventLabelKeys asks for some. A project that cannot be
// read adds none, as in Argo CD; an unreadable argocd-cm is an error.
func EventLabels(ctx context.Context, r client.Reader, namespace string, app *v1alpha1.Application) (map[string]string, error) {
	cm, err := settings.LoadArgoCD(ctx, r, namespace)
	if err != nil {
		return nil, err
	}
	if include, _ := cm.EventLabelKeys(); len(include) == 0 {
		return nil, nil
	}
	proj := &v1alpha1.AppProject{}
	name := cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName)
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, proj); err != nil {
		proj = &v1alpha1.AppProject{}
	}
	return cm.EventLabels(app.Labels, proj.Labels), nil
}
