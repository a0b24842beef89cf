package server

import (
	"context"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestClusterUpdateAndInvalidateCache: a cluster's fields are changed one
// by one (updatedFields) or whole, keeping its credentials unless new
// ones are given, which must reach the cluster; moving it to a project
// needs update there; invalidate-cache records the request on its Secret,
// as Argo CD's, and in-cluster gets a Secret when it is first changed.
func TestClusterUpdateAndInvalidateCache(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.ops": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "p, ops, clusters, *, */*, allow\np, ops, clusters, *, https://*, allow"}}); err != nil {
		t.Fatal(err)
	}
	admin, ops := f.adminToken(), f.apiKey("ops")
	cfg := kubeCluster.Config
	server := strings.TrimSuffix(cfg.Host, "/")
	body := `{"server":"` + server + `","name":"second","config":{"bearerToken":"` + cfg.BearerToken + `","tlsClientConfig":{"caData":"` +
		base64.StdEncoding.EncodeToString(cfg.CAData) + `","certData":"` + base64.StdEncoding.EncodeToString(cfg.CertData) +
		`","keyData":"` + base64.StdEncoding.EncodeToString(cfg.KeyData) + `"}}}`
	if code := f.call("POST", "/api/v1/clusters", body, admin, nil); code != 200 {
		t.Fatalf("adding a cluster: %d", code)
	}
	path := "/api/v1/clusters/" + url.PathEscape(server)
	var got cluster.Spec
	if code := f.call("PUT", path+"?updatedFields=name&updatedFields=labels&updatedFields=bogus", `{"name":"renamed","labels":{"env":"prod"},"namespaces":["x"]}`, ops, &got); code != 200 ||
		got.Name != "renamed" || got.Labels["env"] != "prod" || len(got.Namespaces) != 0 {
		t.Errorf("update of named fields: %d %+v", code, got)
	}
	if code := f.call("PUT", path, `{"server":"`+server+`","name":"whole","namespaces":["a","b"]}`, ops, &got); code != 200 || got.Name != "whole" || len(got.Namespaces) != 2 {
		t.Errorf("whole update: %d %+v", code, got)
	}
	stored := secretOf(t, f, server)
	if spec, err := cluster.SpecOf(stored); err != nil || len(spec.Config.TLSClientConfig.CAData) == 0 || spec.Config.BearerToken != cfg.BearerToken {
		t.Errorf("a whole update without a config dropped the credentials: %v %+v", err, spec)
	}
	if code := f.call("PUT", path+"?updatedFields=config", `{"config":{"bearerToken":"not-a-token","tlsClientConfig":{"insecure":true}}}`, ops, nil); code != 400 {
		t.Errorf("credentials that do not reach the cluster were stored: %d", code)
	}
	if code := f.call("PUT", path+"?updatedFields=project", `{"project":"team"}`, ops, nil); code != 200 {
		t.Errorf("moving to a project the caller may update in: %d", code)
	}
	if code := f.call("PUT", path+"?updatedFields=name&id.type=name", `{"name":"x"}`, ops, nil); code != 404 {
		t.Errorf("update by a name no cluster has: %d", code)
	}
	if code := f.call("POST", path+"/invalidate-cache", "", ops, &got); code != 200 || got.RefreshRequestedAt == nil {
		t.Errorf("invalidate-cache: %d %+v", code, got)
	}
	if secretOf(t, f, server).Annotations[v1alpha1.AnnotationRefresh] == "" {
		t.Error("invalidate-cache left no refresh annotation on the Secret")
	}
	inCluster := "/api/v1/clusters/" + url.PathEscape(cluster.InClusterServer)
	if code := f.call("POST", inCluster+"/invalidate-cache", "", admin, &got); code != 200 || got.RefreshRequestedAt == nil {
		t.Errorf("invalidate-cache of in-cluster: %d %+v", code, got)
	}
	var list struct{ Items []cluster.Spec }
	f.call("GET", "/api/v1/clusters", "", admin, &list)
	if len(list.Items) != 2 || !slices.ContainsFunc(list.Items, func(c cluster.Spec) bool { return c.Name == cluster.InClusterName && c.RefreshRequestedAt != nil }) {
		t.Errorf("clusters after in-cluster got its Secret: %+v", list.Items)
	}
}

func secretOf(t *testing.T, f *fixture, server string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: cluster.SecretName(server)}, s); err != nil {
		t.Fatal(err)
	}
	return s
}
