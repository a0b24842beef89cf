package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestCompareOptionsIgnoreAggregatedRoles: with argocd-cm's
// resource.compareoptions ignoreAggregatedRoles, the rules an aggregation
// writes into a ClusterRole with an aggregationRule do not make its
// Application OutOfSync; without it, they do.
func TestCompareOptionsIgnoreAggregatedRoles(t *testing.T) {
	for _, ignore := range []bool{true, false} {
		t.Run(map[bool]string{true: "ignored", false: "compared"}[ignore], func(t *testing.T) {
			ctx := context.Background()
			_, ns := controlNamespace(t)
			e := startWith(t, ns, func(o *Options) { o.Resync = time.Hour })
			e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: ns},
				Data: map[string]string{"resource.compareoptions": map[bool]string{true: "ignoreAggregatedRoles: true\n", false: "ignoreAggregatedRoles: false\n"}[ignore]}})
			role := "aggregated-" + ns
			remote := gitserver.NewLocalRepo(t)
			remote.Commit(t, "role", map[string]string{"app/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: " + role +
				"\naggregationRule:\n  clusterRoleSelectors: [{matchLabels: {aggregate-to: " + role + "}}]\nrules: []\n"})
			t.Cleanup(func() { _ = e.kube.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{}) })
			app := newApp(e, "roles", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns})
			app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
			e.create(app)
			e.waitSyncedHealthy("roles")
			// What the aggregation controller writes, by a manager of its own.
			if _, err := e.kube.RbacV1().ClusterRoles().Patch(ctx, role, types.MergePatchType,
				[]byte(`{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`), metav1.PatchOptions{FieldManager: "clusterrole-aggregation-controller"}); err != nil {
				t.Fatal(err)
			}
			if ignore {
				time.Sleep(3 * time.Second) // room for a refresh that would show a difference
				if st := e.app("roles").Status.Sync.Status; st != v1alpha1.SyncStatusCodeSynced {
					t.Errorf("aggregated rules shown as a difference: %s", st)
				}
				return
			}
			e.eventually("OutOfSync on the aggregated rules", func() string {
				if st := e.app("roles").Status.Sync.Status; st != v1alpha1.SyncStatusCodeOutOfSync {
					return string(st)
				}
				return ""
			})
		})
	}
}
