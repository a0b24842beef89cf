package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestBackupsCrossWithArgoCD: a backup Argo CD's `argocd admin export`
// writes restores with `capstan admin import`, and the other way round,
// as the takeover in the README relies on.
func TestBackupsCrossWithArgoCD(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	from := startCapstan(t, false)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: from.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git", Path: "kept", TargetRevision: "1.0.*", TagPrefix: "kept/"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"}}}
	if err := from.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	argocd := argocdcli.New(t)
	kube := func(ns string) []string { return []string{"--kubeconfig", kubeCluster.KubeconfigPath, "-n", ns} }
	restored := func(ns string) *v1alpha1.Application {
		t.Helper()
		got := &v1alpha1.Application{}
		if err := from.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept"}, got); err != nil {
			t.Fatalf("the app was not restored into %s: %v", ns, err)
		}
		return got
	}

	// Argo CD's export, Capstan's import.
	argoBackup := filepath.Join(t.TempDir(), "argocd-backup.yaml")
	out := argocd.Expect(0, append([]string{"admin", "export"}, kube(from.ns)...)...)
	if err := os.WriteFile(argoBackup, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	into := startCapstan(t, false)
	into.expect(0, append([]string{"admin", "import", argoBackup}, kube(into.ns)...)...)
	if got := restored(into.ns); got.Spec.Source.TagPrefix != "kept/" || got.Spec.Source.TargetRevision != "1.0.*" {
		t.Errorf("restored from Argo CD's backup: %+v", got.Spec.Source)
	}

	// Capstan's export, Argo CD's import.
	ourBackup := filepath.Join(t.TempDir(), "capstan-backup.yaml")
	from.expect(0, append([]string{"admin", "export", "-o", ourBackup}, kube(from.ns)...)...)
	again := startCapstan(t, false)
	if out := argocd.Expect(0, append([]string{"admin", "import", ourBackup}, kube(again.ns)...)...); strings.Contains(out, "error") {
		t.Errorf("Argo CD's import of Capstan's backup:\n%s", out)
	}
	if got := restored(again.ns); got.Spec.Source.RepoURL != app.Spec.Source.RepoURL {
		t.Errorf("restored by Argo CD from Capstan's backup: %+v", got.Spec.Source)
	}
}
