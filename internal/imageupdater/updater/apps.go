package updater

import (
	"context"
	"fmt"
	"net/url"
	"reflect"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/writeback"
)

// Applications is where write-back method argocd records new images:
// the Application's spec, through the Kubernetes API or Capstan's API.
type Applications interface {
	// SetImages records changes as the Application's Kustomize images or
	// Helm parameters, and reports whether its spec changed.
	SetImages(ctx context.Context, app types.NamespacedName, changes []writeback.Change) (bool, error)
}

// setOverrides applies changes to an Application's spec, each to the
// source carrying its image, and reports whether the spec changed.
func setOverrides(app *v1alpha1.Application, changes []writeback.Change) (bool, error) {
	before := app.Spec.DeepCopy()
	for _, g := range writeback.BySource(app, config.WriteBack{}, changes) {
		if g.Source == nil {
			return false, fmt.Errorf("argocd write-back of Application/%s/%s needs a source", app.Namespace, app.Name)
		}
		if !writeback.SetOverrides(g.Source, g.Type, g.Changes) {
			return false, fmt.Errorf("argocd write-back of Application/%s/%s needs a Kustomize, Helm or plugin source, not %s; use write-back-method git", app.Namespace, app.Name, g.Type)
		}
	}
	return !reflect.DeepEqual(before, &app.Spec), nil
}

// KubernetesApplications updates Applications through the Kubernetes API
// (applications_api: kubernetes, the default).
type KubernetesApplications struct {
	Client client.Client
}

// SetImages implements Applications, retrying on conflicting writes.
func (k *KubernetesApplications) SetImages(ctx context.Context, key types.NamespacedName, changes []writeback.Change) (bool, error) {
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var app v1alpha1.Application
		if err := k.Client.Get(ctx, key, &app); err != nil {
			return err
		}
		var err error
		if changed, err = setOverrides(&app, changes); err != nil || !changed {
			return err
		}
		return k.Client.Update(ctx, &app)
	})
	return changed, err
}

// APIApplications updates Applications through Capstan's API with an API
// token (applications_api: argocd), needing only get and update on
// applications, as Image Updater's documented installs grant its account.
type APIApplications struct {
	Client *apiclient.Client
}

// SetImages implements Applications.
func (a *APIApplications) SetImages(ctx context.Context, key types.NamespacedName, changes []writeback.Change) (bool, error) {
	query := url.Values{"appNamespace": {key.Namespace}}
	var app v1alpha1.Application
	if err := a.Client.Do(ctx, "GET", apiclient.PathOf("/api/v1/applications/{name}", key.Name).With(query), nil, &app); err != nil {
		return false, fmt.Errorf("application %s: %w", key, err)
	}
	if changed, err := setOverrides(&app, changes); err != nil || !changed {
		return false, err
	}
	if err := a.Client.Do(ctx, "PUT", apiclient.PathOf("/api/v1/applications/{name}/spec", key.Name).With(query), app.Spec, nil); err != nil {
		return false, fmt.Errorf("updating application %s through the API: %w", key, err)
	}
	return true, nil
}
