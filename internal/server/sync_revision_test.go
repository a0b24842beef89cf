package server

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestRevisionSyncNeedsOverride: with argocd-cm's
// application.sync.requireOverridePrivilegeForRevisionSync, a caller who
// may sync but not override syncs to the sources' own revision only, as
// in Argo CD; without it, to any revision.
func TestRevisionSyncNeedsOverride(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
		"accounts.deployer": "apiKey", "application.sync.requireOverridePrivilegeForRevisionSync": "true"}}
	for _, obj := range []*corev1.ConfigMap{cm, {ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "p, deployer, applications, sync, default/*, allow\np, deployer, applications, get, default/*, allow"}}} {
		if err := testobj.Put(ctx, f.c, obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"same", "other", "admin", "unguarded"} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"},
				Sources: []v1alpha1.ApplicationSource{{RepoURL: "https://git.example.com/x.git", TargetRevision: "main"},
					{RepoURL: "https://git.example.com/values.git"}}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	deployer, admin := f.apiKey("deployer"), f.adminToken()
	for _, tc := range []struct {
		app, body, token string
		want             int
	}{
		{"same", `{"revisions":["main","HEAD"],"sourcePositions":[1,2]}`, deployer, 200},
		{"other", `{"revisions":["v1.0"],"sourcePositions":[2]}`, deployer, 403},
		{"admin", `{"revisions":["v1.0"],"sourcePositions":[1]}`, admin, 200},
	} {
		if code := f.call("POST", "/api/v1/applications/"+tc.app+"/sync", tc.body, tc.token, nil); code != tc.want {
			t.Errorf("sync of %s with %s: %d, want %d", tc.app, tc.body, code, tc.want)
		}
	}
	cm.Data["application.sync.requireOverridePrivilegeForRevisionSync"] = "false"
	cm.ResourceVersion = ""
	if err := testobj.Put(ctx, f.c, cm); err != nil {
		t.Fatal(err)
	}
	if code := f.call("POST", "/api/v1/applications/unguarded/sync", `{"revisions":["v1.0"],"sourcePositions":[1]}`, deployer, nil); code != 200 {
		t.Errorf("sync to another revision with the setting off: %d, want 200", code)
	}
}

// TestRollbackActionEnforced: with argocd-cm's
// server.rbac.rollback.enforce.enable a rollback needs the applications
// rollback action, and sync is not enough; without it, sync is what a
// rollback needs. can-i rollback answers the same way, as in Argo CD.
func TestRollbackActionEnforced(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
		"accounts.syncer": "apiKey", "accounts.roller": "apiKey", "server.rbac.rollback.enforce.enable": "true"}}
	for _, obj := range []*corev1.ConfigMap{cm, {ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "p, syncer, applications, sync, default/*, allow\np, syncer, applications, get, default/*, allow\n" +
			"p, roller, applications, rollback, default/*, allow\np, roller, applications, get, default/*, allow\n"}}} {
		if err := testobj.Put(ctx, f.c, obj); err != nil {
			t.Fatal(err)
		}
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git"}}}
	// Argo CD's CRD has no status subresource: the history is written with the object.
	app.Status.History = v1alpha1.RevisionHistories{{ID: 1, Revision: "abc", Source: *app.Spec.Source, DeployedAt: metav1.Now()}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	syncer, roller := f.apiKey("syncer"), f.apiKey("roller")
	canI := func(token string) string {
		var answer map[string]string
		f.call("GET", "/api/v1/account/can-i/applications/rollback/default/web", "", token, &answer)
		return answer["value"]
	}
	if code := f.call("POST", "/api/v1/applications/web/rollback", `{"id":1,"dryRun":true}`, syncer, nil); code != 403 {
		t.Errorf("enforced: a rollback with sync only: %d, want 403", code)
	}
	if got := canI(syncer); got != "no" {
		t.Errorf("enforced: can-i rollback with sync only: %s", got)
	}
	if code := f.call("POST", "/api/v1/applications/web/rollback", `{"id":1,"dryRun":true}`, roller, nil); code != 200 {
		t.Errorf("enforced: a rollback with the rollback action: %d, want 200", code)
	}
	if got := canI(roller); got != "yes" {
		t.Errorf("enforced: can-i rollback with the rollback action: %s", got)
	}
	cm.Data["server.rbac.rollback.enforce.enable"] = "false"
	cm.ResourceVersion = ""
	if err := testobj.Put(ctx, f.c, cm); err != nil {
		t.Fatal(err)
	}
	if got := canI(syncer); got != "yes" {
		t.Errorf("not enforced: can-i rollback with sync: %s", got)
	}
	if got := canI(roller); got != "no" {
		t.Errorf("not enforced: can-i rollback with rollback but not sync: %s", got)
	}
}
