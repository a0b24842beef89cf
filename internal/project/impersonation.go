package project

import (
	"fmt"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// SyncUser is who an Application acts as in its destination when
// argocd-cm's application.sync.impersonation.enabled is "true" (enabled):
// the service account of the first of its project's
// destinationServiceAccounts whose server and namespace match the app's
// destination, as Argo CD picks it. Its syncs and deletions act so, and so
// do the API's changes to its resources (patch, delete, actions, exec).
// With impersonation off it is "": the acting component's own rights; so
// it is when no entry matches and impersonation is not enforced
// (application.sync.impersonation.enforced, true by default).
func SyncUser(enabled, enforced bool, app *v1alpha1.Application, proj *v1alpha1.AppProject, server string) (string, error) {
	if !enabled {
		return "", nil
	}
	ns := app.Spec.Destination.Namespace
	if proj != nil {
		for _, sa := range proj.Spec.DestinationServiceAccounts {
			if !GlobMatchAll(OrStar(sa.Server), server) || !GlobMatchAll(OrStar(sa.Namespace), ns) {
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
		return "", nil
	}
	return "", fmt.Errorf("no matching service account found for destination server %s and namespace %s", server, ns)
}
