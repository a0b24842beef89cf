package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSyncImpersonation: with application.sync.impersonation.enabled, a
// sync acts as the service account the project names for the
// destination: what its Role allows is synced, what it does not is
// refused by Kubernetes, and a destination no entry matches is refused
// before anything is applied.
func TestSyncImpersonation(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	dest := testCluster.NewNamespace(t)
	e.create(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: e.ns}, Data: map[string]string{"application.sync.impersonation.enabled": "true"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: dest}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmaps", Namespace: dest},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: dest},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: dest}}},
		&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "limited", Namespace: e.ns}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			DestinationServiceAccounts: []v1alpha1.ApplicationDestinationServiceAccount{{Server: "*", Namespace: dest, DefaultServiceAccount: "deployer"}},
		}},
	)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{
		"cm/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
		"secret/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: b}\n",
	})
	at := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}
	e.create(newApp(e, "allowed", "limited", remote.URL, "cm", at), newApp(e, "refused", "limited", remote.URL, "secret", at))
	e.waitSyncedHealthy("allowed")
	e.operationFailed("refused", `"system:serviceaccount:`+dest+`:deployer" cannot patch resource "secrets"`)

	elsewhere := testCluster.NewNamespace(t)
	e.create(newApp(e, "unmatched", "limited", remote.URL, "cm", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: elsewhere}))
	e.operationFailed("unmatched", "no matching service account found for destination server https://kubernetes.default.svc and namespace "+elsewhere)

	// Deleting the Application deletes its resources as the service
	// account too: without the right to delete, they stay.
	ctx := context.Background()
	role := &rbacv1.Role{}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: dest, Name: "configmaps"}, role); err != nil {
		t.Fatal(err)
	}
	role.Rules[0].Verbs = []string{"get", "list", "watch", "create", "update", "patch"}
	if err := e.client.Update(ctx, role); err != nil {
		t.Fatal(err)
	}
	e.update("allowed", func(a *v1alpha1.Application) { a.Finalizers = []string{v1alpha1.ResourcesFinalizerName} })
	if err := e.client.Delete(ctx, e.app("allowed")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // several finalizer attempts
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Fatalf("the ConfigMap was deleted though the service account may not delete it: %v", err)
	}
	role.Rules[0].Verbs = []string{"*"}
	if err := e.client.Update(ctx, role); err != nil {
		t.Fatal(err)
	}
	e.eventually("the ConfigMap deleted", func() string {
		if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "cm", metav1.GetOptions{}); err == nil {
			return "still there"
		}
		return ""
	})
}
