package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// waitCondition waits for a condition of type t whose message holds want,
// and returns it.
func (e *env) waitCondition(name string, t v1alpha1.ApplicationConditionType, want string) v1alpha1.ApplicationCondition {
	e.t.Helper()
	var found v1alpha1.ApplicationCondition
	e.eventually(string(t)+" "+want, func() string {
		conds := e.app(name).Status.Conditions
		for _, c := range conds {
			if c.Type == t && strings.Contains(c.Message, want) {
				found = c
				return ""
			}
		}
		return fmt.Sprintf("conditions %v", conds)
	})
	return found
}

// TestInjectingSourcesCreatedWithKubectl stores Applications whose
// repository URL or revision would make git run a command, the way kubectl
// would (no API server in between): each gets a ComparisonError naming
// what is wrong, and nothing runs.
func TestInjectingSourcesCreatedWithKubectl(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	for i, src := range []v1alpha1.ApplicationSource{
		{RepoURL: "--upload-pack=touch " + marker, Path: "app", TargetRevision: strings.Repeat("a", 40)},
		{RepoURL: "-c core.sshCommand=touch " + marker, Path: "app"},
		{RepoURL: "ext::sh -c touch% " + marker, Path: "app"},
		{RepoURL: "file:///nonexistent.git", Path: "app", TargetRevision: "--output=" + marker},
	} {
		name := fmt.Sprintf("inject-%d", i)
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: v1alpha1.ApplicationSpec{
			Project: "default", Source: &src,
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: e.ns},
		}}
		if err := e.client.Create(context.Background(), app); err != nil {
			t.Fatal(err)
		}
		want := "invalid repository URL"
		if i == 3 {
			want = "invalid revision"
		}
		e.waitCondition(name, v1alpha1.ApplicationConditionComparisonError, want)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("a payload ran: %s exists", marker)
	}
}

// TestAutomatedSyncNeverWipesOutAnApp empties an automated, pruning app's
// directory in Git: without allowEmpty nothing is deleted, and the app
// says why with Argo CD's SyncError; restoring a file clears it.
func TestAutomatedSyncNeverWipesOutAnApp(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\n"})
	dest := testCluster.NewNamespace(t)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: e.ns}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
	}}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("empty")
	remote.Commit(t, "empty the app", map[string]string{"app/cm.yaml": "", "app/README.md": "nothing here\n"})
	e.update("empty", func(a *v1alpha1.Application) {
		a.Annotations = map[string]string{v1alpha1.AnnotationRefresh: "normal"}
	})
	c := e.waitCondition("empty", v1alpha1.ApplicationConditionSyncError, "auto-sync will wipe out all resources")
	if !strings.HasPrefix(c.Message, "Skipping sync attempt to ") {
		t.Errorf("condition %q", c.Message)
	}
	e.waitReconciles("empty", 2)
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Fatalf("the app's ConfigMap was deleted: %v", err)
	}
	remote.Commit(t, "back", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\n"})
	e.update("empty", func(a *v1alpha1.Application) {
		a.Annotations = map[string]string{v1alpha1.AnnotationRefresh: "normal"}
	})
	e.eventually("the SyncError cleared", func() string {
		for _, c := range e.app("empty").Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionSyncError {
				return c.Message
			}
		}
		return ""
	})
}

// TestSpecChangeIsSyncedAutomatically changes an automated app's source
// (not its revision): as in Argo CD, that calls for a new automated sync
// even without self-heal, which is how the image updater's argocd
// write-back reaches the cluster.
func TestSpecChangeIsSyncedAutomatically(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "two", map[string]string{
		"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"app/b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	})
	dest := testCluster.NewNamespace(t)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "spec", Namespace: e.ns}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app", Directory: &v1alpha1.ApplicationSourceDirectory{Include: "a.yaml"}},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("spec")
	e.update("spec", func(a *v1alpha1.Application) { a.Spec.Source.Directory.Include = "*.yaml" })
	e.eventually("b deployed", func() string {
		if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "b", metav1.GetOptions{}); err != nil {
			return err.Error()
		}
		return ""
	})
	if n := len(e.app("spec").Status.History); n != 2 {
		t.Errorf("%d history entries, want 2", n)
	}
}
