package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/gobwas/glob"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
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
	user, err := syncUser(set.cm.SyncImpersonationEnabled(), set.cm.SyncImpersonationEnforced(), app, proj, dest.Cluster.Server)
	if err != nil || user == "" {
		return dest.Client, err
	}
	return dest.As(user)
}

// syncUser is who a sync of app acts as when argocd-cm's
// application.sync.impersonation.enabled is "true": the service account
// of the first of its project's destinationServiceAccounts whose server
// and namespace match the app's destination, as Argo CD picks it. With
// impersonation off it is "": the controller's own rights; so it is when
// no entry matches and impersonation is not enforced
// (application.sync.impersonation.enforced, true by default).
func syncUser(enabled, enforced bool, app *v1alpha1.Application, proj *v1alpha1.AppProject, server string) (string, error) {
	if !enabled {
		return "", nil
	}
	ns := app.Spec.Destination.Namespace
	if proj != nil {
		for _, sa := range proj.Spec.DestinationServiceAccounts {
			if !globMatch(sa.Server, server) || !globMatch(sa.Namespace, ns) {
				continue
			}
			name := strings.TrimSpace(sa.DefaultServiceAccount)
			saNamespace, saName, qualified := strings.Cut(name, ":")
			if !qualified {
				saNamespace, saName = ns, name
			}
			if saName == "" || saNamespace == "" {
				return "", fmt.Errorf("default service account %q of AppProject %s names no service account", sa.DefaultServiceAccount, proj.Name)
			}
			return "system:serviceaccount:" + saNamespace + ":" + saName, nil
		}
	}
	if !enforced {
		return "", nil // application.sync.impersonation.enforced false: the controller's own rights
	}
	return "", fmt.Errorf("no matching service account found for destination server %s and namespace %s", server, ns)
}

// globMatch matches s against a glob; an empty pattern matches anything.
func globMatch(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	g, err := glob.Compile(pattern)
	return err == nil && g.Match(s)
}
