package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// TestAdminNotifications tries Argo CD's notifications catalog with the
// admin tools: triggers and templates listed, a trigger evaluated for an
// Application in the cluster, a template rendered to the console, and the
// same from files instead of the cluster.
func TestAdminNotifications(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	ctx := context.Background()
	dir := toolbin.Find(t, "CAPSTAN_ARGOCD_MANIFESTS", "bin/argocd-manifests", "argocd-manifests")
	catalogFile := filepath.Join(dir, "notifications-catalog.yaml")
	data, err := os.ReadFile(catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	cm.Namespace = f.ns
	if err := testobj.Put(ctx, f.c, &cm); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/demo.git", Path: "guestbook"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "guestbook"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	finished := metav1.Now()
	app.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "abc"}
	app.Status.OperationState = &v1alpha1.OperationState{Phase: "Succeeded", StartedAt: finished, FinishedAt: &finished}
	if err := f.c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	kube := []string{"--kubeconfig", kubeCluster.KubeconfigPath, "-n", f.ns}
	tool := func(want int, args ...string) string {
		t.Helper()
		return f.expect(want, append(append([]string{"admin", "notifications"}, args...), kube...)...)
	}

	out := tool(0, "trigger", "get")
	if !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "on-deployed") || !strings.Contains(out, "app-sync-succeeded") {
		t.Errorf("trigger get:\n%s", out)
	}
	if out := tool(0, "trigger", "get", "on-created", "-o", "yaml"); !strings.Contains(out, "on-created:") || !strings.Contains(out, `when: "true"`) {
		t.Errorf("trigger get -o yaml:\n%s", out)
	}
	if out := tool(0, "template", "get", "app-created", "-o", "name"); out != "app-created\n" {
		t.Errorf("template get -o name: %q", out)
	}
	if out := tool(0, "trigger", "run", "on-sync-succeeded", "guestbook"); !strings.Contains(out, "true") {
		t.Errorf("trigger run on-sync-succeeded:\n%s", out)
	}
	if out := tool(0, "trigger", "run", "on-sync-failed", "guestbook"); !strings.Contains(out, "false") || strings.Contains(out, "true") {
		t.Errorf("trigger run on-sync-failed:\n%s", out)
	}
	if out := tool(0, "template", "notify", "app-sync-succeeded", "guestbook"); !strings.Contains(out, "Application guestbook has been successfully synced") {
		t.Errorf("template notify:\n%s", out)
	}
	tool(1, "template", "notify", "no-such-template", "guestbook")
	tool(1, "trigger", "run", "no-such-trigger", "guestbook")

	// From files, the cluster's ConfigMap aside.
	appFile := filepath.Join(t.TempDir(), "app.yaml")
	appYAML, err := yaml.Marshal(app)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(appFile, appYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	cm.Data = nil
	if err := f.c.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	out = tool(0, "template", "notify", "app-created", appFile, "--config-map", catalogFile, "--secret", ":empty")
	if !strings.Contains(out, "Application guestbook has been created.") {
		t.Errorf("template notify from files:\n%s", out)
	}
}
