package controller

import (
	"context"

	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/project"
)

// syncClient is the client a sync of app applies and prunes with: the
// destination's, or one acting as the project's service account when
// sync impersonation is on.
func (r *reconciler) syncClient(ctx context.Context, app *v1alpha1.Application, comp *comparison) (dynamic.Interface, error) {
	return r.actingClient(ctx, app, comp.project, comp.dest)
}

// actingClient is the client app's syncs and deletions act through on
// dest: the destination's own, or, when sync impersonation is on, one
// acting as the service account proj names for the destination.
func (r *reconciler) actingClient(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject, dest *engine.Destination) (dynamic.Interface, error) {
	set, err := r.settings(ctx)
	if err != nil {
		return nil, err
	}
	user, err := project.SyncUser(set.cm.SyncImpersonationEnabled(), set.cm.SyncImpersonationEnforced(), app, proj, dest.Cluster.Server)
	if err != nil || user == "" {
		return dest.Client, err
	}
	return dest.As(user)
}
