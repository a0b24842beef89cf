package commands

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestImageUpdaterAccountThroughArgoCDClient makes, with Argo CD's own
// client over gRPC-Web, the calls Argo CD Image Updater makes in its argocd
// API mode (list, get, update spec), as the restricted account Image Updater documents
// sets up: an image-updater account with an API key, allowed to get and
// update applications and nothing else. The new image reaches the cluster
// through automated sync; the account's other requests are refused.
func TestImageUpdaterAccountThroughArgoCDClient(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	ctx := context.Background()
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "argocd-cm"}, Data: map[string]string{"accounts.image-updater": "apiKey"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "argocd-rbac-cm"}, Data: map[string]string{"policy.default": "role:readonly",
			"policy.csv": "p, role:image-updater, applications, get, */*, allow\np, role:image-updater, applications, update, */*, allow\n" +
				"g, image-updater, role:image-updater\n"}},
	} {
		if err := testobj.Put(ctx, f.c, cm); err != nil {
			t.Fatal(err)
		}
	}
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{
		"app/kustomization.yaml": "resources: [deploy.yaml]\n",
		"app/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n" +
			"  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: api, image: registry.example.com/api:1.0.0}]}\n",
	})

	admin := argocdcli.New(t)
	admin.Flags = []string{"--grpc-web"}
	admin.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	admin.Expect(0, "app", "create", "api", "--repo", remote.URL, "--path", "app", "--revision", "main", "--sync-policy", "automated",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	token := strings.TrimSpace(admin.Expect(0, "account", "generate-token", "--account", "image-updater"))

	updater := argocdcli.New(t)
	updater.Flags = []string{"--server", f.addr, "--auth-token", token, "--insecure", "--grpc-web"}
	if out := updater.Expect(0, "app", "list", "-o", "name"); !strings.Contains(out, "api") {
		t.Errorf("app list as image-updater:\n%s", out)
	}
	updater.Expect(0, "app", "set", "api", "--kustomize-image", "registry.example.com/api:1.1.0")
	app := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "api"}, app); err != nil {
		t.Fatal(err)
	}
	if k := app.Spec.Source.Kustomize; k == nil || len(k.Images) != 1 || string(k.Images[0]) != "registry.example.com/api:1.1.0" {
		t.Fatalf("the updated spec: %+v", app.Spec.Source)
	}
	eventually.String(t, "the new image reaches the cluster", func() string {
		deploy := &appsv1.Deployment{}
		err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "api"}, deploy)
		if err == nil && deploy.Spec.Template.Spec.Containers[0].Image == "registry.example.com/api:1.1.0" {
			return ""
		}
		return fmt.Sprintf("%v", err)
	})

	for _, denied := range [][]string{{"app", "sync", "api"}, {"app", "delete", "api", "--yes"}, {"proj", "create", "other"}} {
		if code, out, errOut := updater.Run(denied...); code == 0 || !strings.Contains(errOut, "PermissionDenied") {
			t.Errorf("argocd %s as image-updater: exit %d\n%s%s", strings.Join(denied, " "), code, out, errOut)
		}
	}
}
