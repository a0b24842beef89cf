package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

func TestApplicationsInOtherNamespaces(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	team, stranger := testCluster.NewNamespace(t), testCluster.NewNamespace(t)
	e := startWith(t, testCluster.NewNamespace(t), func(o *Options) { o.ApplicationNamespaces = []string{team} })
	dest := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-team}\n"})
	inTeam := newApp(e, "teams-app", "default", remote.URL, "a", dest)
	inTeam.Namespace = team
	ignored := newApp(e, "strangers-app", "default", remote.URL, "a", dest)
	ignored.Namespace = stranger
	e.create(inTeam, ignored)

	appIn := func(ns, name string) *v1alpha1.Application {
		a := &v1alpha1.Application{}
		if err := e.client.Get(context.Background(), clientKey(ns, name), a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	// The default project lists no source namespaces.
	e.eventually("project refusal", func() string {
		for _, c := range appIn(team, "teams-app").Status.Conditions {
			if strings.Contains(c.Message, "in namespace '"+team+"' is not permitted to use project 'default'") {
				return ""
			}
		}
		return fmt.Sprintf("conditions %v", appIn(team, "teams-app").Status.Conditions)
	})
	e.create(&v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: e.ns},
		Spec: v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, SourceNamespaces: []string{team},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}},
	})
	err := retryUpdate(e, team, "teams-app", func(a *v1alpha1.Application) { a.Spec.Project = "team" })
	if err != nil {
		t.Fatal(err)
	}
	e.eventually("teams-app Synced", func() string {
		a := appIn(team, "teams-app")
		if a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded {
			return ""
		}
		return fmt.Sprintf("%s %v", a.Status.Sync.Status, a.Status.Conditions)
	})
	cm, err := e.kube.CoreV1().ConfigMaps(dest.Namespace).Get(context.Background(), "from-team", metav1.GetOptions{})
	if err != nil || cm.Annotations[v1alpha1.AnnotationTrackingID] != team+"_teams-app:/ConfigMap:"+dest.Namespace+"/from-team" {
		t.Errorf("ConfigMap %v, tracking %q", err, cm.Annotations[v1alpha1.AnnotationTrackingID])
	}
	time.Sleep(time.Second) // room for a reconcile that should not happen
	if a := appIn(stranger, "strangers-app"); a.Status.ReconciledAt != nil {
		t.Errorf("an Application outside --application-namespaces was reconciled: %+v", a.Status.Sync)
	}
}

func clientKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// retryUpdate changes the Application ns/name as a user would.
func retryUpdate(e *env, ns, name string, change func(*v1alpha1.Application)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		a := &v1alpha1.Application{}
		if err := e.client.Get(context.Background(), clientKey(ns, name), a); err != nil {
			return err
		}
		change(a)
		return e.client.Update(context.Background(), a)
	})
}
