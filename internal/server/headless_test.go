package server

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestHeadlessServer checks the server the CLI's --core mode runs: every
// request is the administrator's without a session, and the install's
// settings are left as they are.
func TestHeadlessServer(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startWith(t, Options{Insecure: true, Headless: true})
	var info apiwire.UserInfo
	if code := f.call(http.MethodGet, "/api/v1/session/userinfo", "", "", &info); code != http.StatusOK || !info.LoggedIn || info.Username != headlessUser {
		t.Errorf("userinfo: %d %+v", code, info)
	}
	ctx := context.Background()
	team := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: f.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}}}
	if err := f.c.Create(ctx, team); err != nil {
		t.Fatal(err)
	}
	body := `{"metadata":{"name":"web"},"spec":{"project":"team","source":{"repoURL":"https://git.example.com/x.git","path":"web"},` +
		`"destination":{"server":"https://kubernetes.default.svc","namespace":"x"}}}`
	if code := f.call(http.MethodPost, "/api/v1/applications", body, "", nil); code != http.StatusOK {
		t.Errorf("create without a session: %d", code)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: settings.ServerSecretName}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("argocd-secret written by a headless server: %v", err)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "default"}, &v1alpha1.AppProject{}); !apierrors.IsNotFound(err) {
		t.Errorf("default project created by a headless server: %v", err)
	}
}
