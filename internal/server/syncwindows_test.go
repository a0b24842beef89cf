package server

import (
	"context"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSyncWindowsThroughTheAPI: an open deny window refuses a manual sync
// with Argo CD's PermissionDenied answer, unless it allows manual syncs;
// the app's and the project's syncwindows views show what applies.
func TestSyncWindowsThroughTheAPI(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false)
	admin := f.adminToken()
	always := v1alpha1.SyncWindow{Kind: project.WindowDeny, Schedule: "* * * * *", Duration: "24h", Namespaces: []string{"prod-*"}}
	never := v1alpha1.SyncWindow{Kind: project.WindowAllow, Schedule: "0 0 1 1 *", Duration: "1m", Applications: []string{"other"}}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "frozen", Namespace: f.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SyncWindows: v1alpha1.SyncWindows{&always, &never},
	}}
	if err := f.c.Create(ctx, proj); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"prod-eu", "dev"} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: ns, Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{
			Project: "frozen", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git"}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}

	var refused map[string]any
	if code := f.call("POST", "/api/v1/applications/prod-eu/sync", `{}`, admin, &refused); code != 403 ||
		refused["message"] != "cannot sync: blocked by sync window" || refused["code"] != float64(7) {
		t.Errorf("sync inside a deny window: %d %v", code, refused)
	}
	if code := f.call("POST", "/api/v1/applications/dev/sync", `{}`, admin, nil); code != 200 {
		t.Errorf("sync of an app no window matches: %d", code)
	}

	var raw json.RawMessage
	f.call("GET", "/api/v1/applications/prod-eu/syncwindows", "", admin, &raw)
	want := `{"activeWindows":[{"kind":"deny","schedule":"* * * * *","duration":"24h","manualSync":false}],"assignedWindows":[{"kind":"deny","schedule":"* * * * *","duration":"24h","manualSync":false}],"canSync":false}`
	if string(raw) != want {
		t.Errorf("app windows:\n%s\nwant\n%s", raw, want)
	}
	f.call("GET", "/api/v1/applications/dev/syncwindows", "", admin, &raw)
	if string(raw) != `{"canSync":true}` {
		t.Errorf("windows of an app none matches: %s", raw)
	}
	var active struct{ Windows []v1alpha1.SyncWindow }
	if code := f.call("GET", "/api/v1/projects/frozen/syncwindows", "", admin, &active); code != 200 || len(active.Windows) != 1 || active.Windows[0].Namespaces[0] != "prod-*" {
		t.Errorf("project's open windows: %d %+v", code, active)
	}

	proj.Spec.SyncWindows[0].ManualSync = true
	if err := f.c.Update(ctx, proj); err != nil {
		t.Fatal(err)
	}
	var app v1alpha1.Application
	f.pollCall(t, "POST", "/api/v1/applications/prod-eu/sync", admin, &app, func() bool { return app.Operation != nil })
}
