package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestApplicationNamespacesServed: Applications outside the control
// namespace are served only from the namespaces the server is started
// with, and only when their project accepts the namespace, as Argo CD's
// API does. A namespace not enabled shows nothing and changes nothing,
// even to an admin.
func TestApplicationNamespacesServed(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	enabled, disabled := kubeCluster.NewNamespace(t), kubeCluster.NewNamespace(t)
	f := serve(t, Options{Insecure: true, ApplicationNamespaces: []string{enabled}}, true)
	token := f.adminToken()
	ctx := context.Background()
	team := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: f.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:      []string{"*"},
		Destinations:     []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SourceNamespaces: []string{enabled, disabled},
	}}
	if err := f.c.Create(ctx, team); err != nil {
		t.Fatal(err)
	}
	app := func(name, ns, proj string) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.ApplicationSpec{
			Project:     proj,
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "apps", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "apps"},
		}}
	}
	for _, a := range []*v1alpha1.Application{app("served", enabled, "team"), app("refused", enabled, "default"), app("hidden", disabled, "team")} {
		if err := f.c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	body := func(a *v1alpha1.Application) string {
		data, _ := json.Marshal(a)
		return string(data)
	}
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
		says                     string
	}{
		{"an app of an enabled namespace its project accepts", "GET", "/api/v1/applications/served?appNamespace=" + enabled, "", 200, ""},
		{"an app whose project does not accept its namespace", "GET", "/api/v1/applications/refused?appNamespace=" + enabled, "", 400, `app is not allowed in project "default", or the project does not exist`},
		{"an app of a namespace not enabled", "GET", "/api/v1/applications/hidden?appNamespace=" + disabled, "", 403, "namespace '" + disabled + "' is not permitted"},
		{"a missing app of a namespace not enabled", "GET", "/api/v1/applications/nothing?appNamespace=" + disabled, "", 403, "is not permitted"},
		{"deleting an app of a namespace not enabled", "DELETE", "/api/v1/applications/hidden?appNamespace=" + disabled, "", 403, "is not permitted"},
		{"syncing an app of a namespace not enabled", "POST", "/api/v1/applications/hidden/sync?appNamespace=" + disabled, "{}", 403, "is not permitted"},
		{"its resource tree", "GET", "/api/v1/applications/hidden/resource-tree?appNamespace=" + disabled, "", 403, "is not permitted"},
		{"following a namespace not enabled", "GET", "/api/v1/stream/applications?appNamespace=" + disabled, "", 403, "is not permitted"},
		{"creating in a namespace not enabled", "POST", "/api/v1/applications", body(app("new", disabled, "team")), 403, "is not permitted"},
		{"creating where the project does not accept the namespace", "POST", "/api/v1/applications", body(app("new", enabled, "default")), 400, "app is not allowed in project"},
		{"creating where it does", "POST", "/api/v1/applications", body(app("new", enabled, "team")), 200, ""},
	} {
		var out map[string]any
		resp := f.send(ctx, tc.method, tc.path, tc.body, token)
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %s %s answered %d (%v), want %d", tc.name, tc.method, tc.path, resp.StatusCode, out, tc.want)
			continue
		}
		if msg, _ := out["message"].(string); !strings.Contains(msg, tc.says) {
			t.Errorf("%s: message %q, want it to say %q", tc.name, msg, tc.says)
		}
	}
	var list v1alpha1.ApplicationList
	if code := f.call("GET", "/api/v1/applications?appNamespace="+disabled, "", token, &list); code != 200 || len(list.Items) != 0 {
		t.Errorf("the list of a namespace not enabled answered %d with %d apps, want 200 and none", code, len(list.Items))
	}
	if code := f.call("GET", "/api/v1/applications?appNamespace="+enabled, "", token, &list); code != 200 || len(list.Items) != 3 {
		t.Errorf("the list of an enabled namespace answered %d with %d apps, want 200 and 3", code, len(list.Items))
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: disabled, Name: "hidden"}, &v1alpha1.Application{}); err != nil {
		t.Errorf("the app of the namespace not enabled: %v, want it untouched", err)
	}
}
