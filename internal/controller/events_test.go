package controller

import (
	"context"
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestEventLabels: the Events the controller records for an Application
// carry the labels argocd-cm's resource.includeEventLabelKeys asks for,
// less resource.excludeEventLabelKeys, as Argo CD's.
func TestEventLabels(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	if err := e.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: e.ns},
		Data: map[string]string{"resource.includeEventLabelKeys": "team,env*", "resource.excludeEventLabelKeys": "env-secret"}}); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: labelled}\ndata: {a: b}\n"})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "labelled", Namespace: e.ns,
			Labels: map[string]string{"team": "payments", "env": "prod", "env-secret": "x", "other": "y"}},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}},
	}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"team": "payments", "env": "prod"}
	e.eventually("labelled OperationStarted and OperationCompleted Events", func() string {
		list, err := e.kube.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		seen := map[string]bool{}
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name != "labelled" {
				continue
			}
			if !maps.Equal(ev.Labels, want) {
				return fmt.Sprintf("%s Event labelled %v, want %v", ev.Reason, ev.Labels, want)
			}
			seen[ev.Reason] = true
		}
		if !seen["OperationStarted"] || !seen["OperationCompleted"] {
			return fmt.Sprintf("events seen: %v", seen)
		}
		return ""
	})
}
