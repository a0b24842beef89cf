package controller

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/logbuf"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// TestRespectIgnoreDifferencesKeepsLiveValues: with the sync option, a
// sync of a new commit applies the ignored field with its live value.
func TestRespectIgnoreDifferencesKeepsLiveValues(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: one, w: one}\n"})
	dest := testCluster.NewNamespace(t)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "respect", Namespace: e.ns}, Spec: v1alpha1.ApplicationSpec{
		Project:           "default",
		Source:            &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
		Destination:       v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		IgnoreDifferences: []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"/data/v"}}},
		SyncPolicy:        &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}, SyncOptions: []string{"RespectIgnoreDifferences=true"}},
	}}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("respect")
	cm, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "edited"
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	remote.Commit(t, "two", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: one, w: two}\n"})
	e.eventually("w deployed, v kept", func() string {
		cm, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if cm.Data["w"] != "two" || cm.Data["v"] != "edited" {
			return "data " + cm.Data["v"] + "/" + cm.Data["w"]
		}
		return ""
	})
}

// TestDeleteFalseSurvivesAppDeletion: a cascading delete of an app leaves
// the objects marked Delete=false, as Argo CD does.
func TestDeleteFalseSurvivesAppDeletion(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "two", map[string]string{
		"app/gone.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone}\n",
		"app/kept.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept, annotations: {argocd.argoproj.io/sync-options: Delete=false}}\n",
	})
	dest := testCluster.NewNamespace(t)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "keep", Namespace: e.ns, Finalizers: []string{resourcesFinalizer}}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("keep")
	if err := e.client.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.eventually("the app deleted", func() string {
		err := e.client.Get(ctx, client.ObjectKeyFromObject(app), &v1alpha1.Application{})
		if apierrors.IsNotFound(err) {
			return ""
		}
		return "still there"
	})
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("the Delete=false ConfigMap: %v", err)
	}
	e.eventually("gone deleted", func() string {
		if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "gone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return "still there"
		}
		return ""
	})
}

// TestIgnoreDifferencesCustomization: argocd-cm's ignoreDifferences for
// every Deployment hides a replica change in the cluster; taken out of
// argocd-cm (no restart), the change shows.
func TestIgnoreDifferencesCustomization(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: e.ns},
		Data: map[string]string{"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers:\n- /spec/replicas\n"}}
	if err := e.client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`})
	dest := testCluster.NewNamespace(t)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "scaled", Namespace: e.ns}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.eventually("synced", func() string {
		if a := e.app("scaled"); a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || a.Status.OperationState == nil ||
			a.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
			return fmt.Sprintf("%s %v", a.Status.Sync.Status, a.Status.Conditions)
		}
		return ""
	})
	// The Deployment's controller writes it too: read and scale again on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := e.kube.AppsV1().Deployments(dest).GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = 5
		_, err = e.kube.AppsV1().Deployments(dest).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	scaled := time.Now()
	e.eventually("compared after the scale", func() string {
		if a := e.app("scaled"); a.Status.ReconciledAt == nil || !a.Status.ReconciledAt.After(scaled.Add(time.Second)) {
			return "not yet"
		}
		return ""
	})
	if a := e.app("scaled"); a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Fatalf("with replicas ignored for Deployments, the scaled app is %s", a.Status.Sync.Status)
	}

	cm.Data = nil
	if err := e.client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	e.eventually("OutOfSync once replicas count", func() string {
		if a := e.app("scaled"); a.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync {
			return string(a.Status.Sync.Status)
		}
		return ""
	})
}

// TestExcludedKindIsNeitherSyncedNorPruned: with ConfigMaps excluded in
// argocd-cm (by resource.exclusions, or left out of resource.inclusions),
// a rendered ConfigMap is not synced (a warning names it) and a
// live one the app tracks is not pruned, while the app's other objects
// sync.
func TestExcludedKindIsNeitherSyncedNorPruned(t *testing.T) {
	localcluster.Need(t)
	for name, data := range map[string]map[string]string{
		"exclusions": {settings.ResourceExclusionsKey: "- apiGroups: ['']\n  kinds: [ConfigMap]\n"},
		// Only what resource.inclusions lists is managed: ConfigMaps are not.
		"inclusions": {"resource.inclusions": "- apiGroups: ['']\n  kinds: [ServiceAccount]\n"},
	} {
		t.Run(name, func(t *testing.T) { excludedKind(t, data) })
	}
}

// excludedKind runs TestExcludedKindIsNeitherSyncedNorPruned with the
// argocd-cm data that leaves ConfigMaps out.
func excludedKind(t *testing.T, data map[string]string) {
	e := start(t)
	ctx := context.Background()
	if err := e.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: e.ns},
		Data: data}); err != nil {
		t.Fatal(err)
	}
	dest := testCluster.NewNamespace(t)
	// A ConfigMap the app tracks, no longer rendered: a pruning sync
	// would delete it, were ConfigMaps not excluded.
	left := &unstructured.Unstructured{}
	left.SetAPIVersion("v1")
	left.SetKind("ConfigMap")
	left.SetNamespace(dest)
	left.SetName("left")
	tracking.Set(tracking.Annotation, tracking.AppKey(e.ns, "excluding", e.ns), left)
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "left", Annotations: left.GetAnnotations()}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rendered}\n",
		"app/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: worker}\n",
	})
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "excluding", Namespace: e.ns}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
	}}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("excluding")
	e.eventually("the warning", func() string {
		for _, c := range e.app("excluding").Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionExcludedResourceWarning && c.Message == "Resource /ConfigMap rendered is excluded in the settings" {
				return ""
			}
		}
		return fmt.Sprint(e.app("excluding").Status.Conditions)
	})
	if _, err := e.kube.CoreV1().ServiceAccounts(dest).Get(ctx, "worker", metav1.GetOptions{}); err != nil {
		t.Errorf("the ServiceAccount was not synced: %v", err)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "rendered", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the excluded ConfigMap was synced: %v", err)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "left", metav1.GetOptions{}); err != nil {
		t.Errorf("the excluded ConfigMap the app tracked was pruned: %v", err)
	}
	for _, r := range e.app("excluding").Status.Resources {
		if r.Kind == "ConfigMap" {
			t.Errorf("an excluded ConfigMap is listed: %+v", r)
		}
	}
}

// TestSkipReconcile: an Application annotated skip-reconcile: "true" is
// left alone (no status, nothing synced) until the annotation goes.
func TestSkipReconcile(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	dest := testCluster.NewNamespace(t)
	app := newApp(e, "skipped", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest})
	app.Annotations = map[string]string{v1alpha1.AnnotationSkipReconcile: "true"}
	e.create(app)
	// Another app, created after it, is reconciled: the controller has had
	// its chance at the skipped one.
	e.create(newApp(e, "witness", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)}))
	e.waitSyncedHealthy("witness")
	time.Sleep(2 * time.Second) // one more resync period
	if a := e.app("skipped"); a.Status.ReconciledAt != nil || a.Status.Sync.Status != "" {
		t.Fatalf("a skipped app was reconciled: %+v", a.Status)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a skipped app was synced: %v", err)
	}
	e.update("skipped", func(a *v1alpha1.Application) { delete(a.Annotations, v1alpha1.AnnotationSkipReconcile) })
	e.waitSyncedHealthy("skipped")
}

// TestConfirmedDeletion: a resource marked Prune=confirm is not pruned
// until the Application's deletion-approved annotation approves it (the
// sync waits, Running, naming it); one marked Delete=confirm outlives its
// Application's deletion until approved the same way.
func TestConfirmedDeletion(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	cm := func(name, options string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", annotations: {argocd.argoproj.io/sync-options: '" + options + "'}}\n"
	}
	remote.Commit(t, "one", map[string]string{"app/kept.yaml": cm("kept", "Prune=true"), "app/guarded.yaml": cm("guarded", "Prune=confirm")})
	dest := testCluster.NewNamespace(t)
	app := newApp(e, "careful", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest})
	app.Spec.SyncPolicy.Automated.Prune = true
	app.Finalizers = []string{resourcesFinalizer}
	e.create(app)
	e.waitSyncedHealthy("careful")

	exists := func(name string) bool {
		_, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, name, metav1.GetOptions{})
		return err == nil
	}
	approve := func() {
		e.update("careful", func(a *v1alpha1.Application) {
			a.Annotations = map[string]string{v1alpha1.AnnotationDeletionApproved: time.Now().UTC().Format(time.RFC3339)}
		})
	}
	remote.Commit(t, "two", map[string]string{"app/guarded.yaml": "", "app/precious.yaml": cm("precious", "Delete=confirm")})
	e.eventually("the sync waiting for confirmation", func() string {
		st := e.app("careful").Status.OperationState
		if st == nil || st.Phase != v1alpha1.OperationRunning || st.Message != "waiting for pruning confirmation of ConfigMap/"+dest+"/guarded" {
			return fmt.Sprintf("%+v", st)
		}
		return ""
	})
	if !exists("guarded") {
		t.Fatal("a Prune=confirm ConfigMap was pruned without approval")
	}
	time.Sleep(time.Second) // approvals count from the operation's start, to the second
	approve()
	e.eventually("pruned once approved", func() string {
		if st := e.app("careful").Status.OperationState; exists("guarded") || st == nil || st.Phase != v1alpha1.OperationSucceeded {
			return fmt.Sprintf("guarded exists %v, operation %+v", exists("guarded"), st)
		}
		return ""
	})

	// Deleting the app: precious waits for approval, kept goes. (The
	// approval above, a second older than the deletion, does not count.)
	time.Sleep(1100 * time.Millisecond) // the deletion comes in a later second than the approval
	if err := e.client.Delete(ctx, e.app("careful")); err != nil {
		t.Fatal(err)
	}
	e.eventually("kept deleted", func() string {
		if exists("kept") {
			return "kept still there"
		}
		return ""
	})
	time.Sleep(2 * time.Second) // room for a deletion that should not happen
	if !exists("precious") || e.app("careful").DeletionTimestamp == nil {
		t.Fatal("a Delete=confirm ConfigMap was deleted without approval, or its app is gone")
	}
	approve()
	e.eventually("precious deleted and the app gone", func() string {
		err := e.client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "careful"}, &v1alpha1.Application{})
		if exists("precious") || !apierrors.IsNotFound(err) {
			return fmt.Sprintf("precious %v, app %v", exists("precious"), err)
		}
		return ""
	})
}

// TestRetryRefresh: with retry.refresh, a failing automated sync's retry
// takes the commit pushed to fix it; the same operation, retried,
// succeeds on the new revision.
func TestRetryRefresh(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "broken", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndatta: {v: broken}\n"})
	dest := testCluster.NewNamespace(t)
	app := newApp(e, "retried", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest})
	app.Spec.SyncPolicy.Retry = &v1alpha1.RetryStrategy{Limit: 20, Refresh: true, Backoff: &v1alpha1.Backoff{Duration: "1s", Factor: new(int64(1))}}
	e.create(app)
	e.eventually("the sync failing and retried", func() string {
		if st := e.app("retried").Status.OperationState; st == nil || st.RetryCount < 1 {
			return fmt.Sprintf("%+v", st)
		}
		return ""
	})
	fixed := remote.Commit(t, "fixed", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: fixed}\n"})
	e.eventually("the retry syncing the fix", func() string {
		st := e.app("retried").Status.OperationState
		if st == nil || st.Phase != v1alpha1.OperationSucceeded || st.SyncResult == nil || st.SyncResult.Revision != fixed || st.RetryCount < 1 {
			return fmt.Sprintf("%+v", st)
		}
		return ""
	})
}

// TestKustomizeBuildOptions: argocd-cm's kustomize.buildOptions reach the
// build: a kustomization using a file beside its directory fails until
// --load-restrictor LoadRestrictionsNone is set, then syncs.
func TestKustomizeBuildOptions(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{
		"shared/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n",
		"app/kustomization.yaml": "resources: [../shared/cm.yaml]\n",
	})
	dest := testCluster.NewNamespace(t)
	e.create(newApp(e, "beside", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}))
	e.waitCondition("beside", v1alpha1.ApplicationConditionComparisonError, "kustomize build")
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: e.ns},
		Data: map[string]string{"kustomize.buildOptions": "--load-restrictor LoadRestrictionsNone"}})
	e.update("beside", func(a *v1alpha1.Application) {
		a.Annotations = map[string]string{v1alpha1.AnnotationRefresh: "hard"}
	})
	e.waitSyncedHealthy("beside")
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "shared", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestKustomizeVersionsAndHelmCharts: argocd-cm's kustomize.path.<version>
// builds the sources naming that version with that program (and its
// kustomize.buildOptions.<version>); a version not registered is a
// comparison error with Argo CD's message; kustomize.buildOptions
// --enable-helm inflates a kustomization's helmCharts.
func TestKustomizeVersionsAndHelmCharts(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{
		"versioned/kustomization.yaml":         "resources: [cm.yaml]\n",
		"versioned/cm.yaml":                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: versioned}\n",
		"charted/kustomization.yaml":           "helmCharts: [{name: web, releaseName: shop, valuesInline: {greeting: hi}}]\n",
		"charted/charts/web/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charted/charts/web/values.yaml":       "greeting: hello\n",
		"charted/charts/web/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-web'}\ndata: {greeting: '{{ .Values.greeting }}'}\n",
	})
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: e.ns}, Data: map[string]string{
		"kustomize.path.v5.8.0":         toolbin.Find(t, "CAPSTAN_KUSTOMIZE_BIN", "bin/kustomize/kustomize", "kustomize"),
		"kustomize.buildOptions.v5.8.0": "--enable-managedby-label",
		"kustomize.buildOptions":        "--enable-helm",
	}})
	dest := testCluster.NewNamespace(t)
	at := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}
	for name, version := range map[string]string{"versioned": "v5.8.0", "unknown": "v9.9.9"} {
		app := newApp(e, name, "default", remote.URL, "versioned", at)
		app.Spec.Source.Kustomize = &v1alpha1.ApplicationSourceKustomize{Version: version, NamePrefix: name + "-"}
		e.create(app)
	}
	e.create(newApp(e, "charted", "default", remote.URL, "charted", at))
	e.waitCondition("unknown", v1alpha1.ApplicationConditionComparisonError, "kustomize version v9.9.9 is not registered")
	e.waitSyncedHealthy("versioned")
	e.waitSyncedHealthy("charted")
	cm, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "versioned-versioned", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := cm.Labels["app.kubernetes.io/managed-by"]; l != "kustomize-v5.8.0" {
		t.Errorf("managed-by %q: not built by the registered program with its options", l)
	}
	if cm, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "shop-web", metav1.GetOptions{}); err != nil || cm.Data["greeting"] != "hi" {
		t.Errorf("the chart's ConfigMap: %v, %v", cm.Data, err)
	}
}

// noCacheCounter counts the renders that bypass the manifest cache.
type noCacheCounter struct {
	repo.Renderer
	hard atomic.Int64
}

func (c *noCacheCounter) Render(ctx context.Context, req *repo.Request) (*repo.Response, error) {
	if req.NoCache {
		c.hard.Add(1)
	}
	return c.Renderer.Render(ctx, req)
}

// TestHardResync: with timeout.hard.reconciliation (Options.HardResync)
// each Application is rendered afresh, past the manifest cache, once per
// period and not on every reconcile.
func TestHardResync(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	counter := &noCacheCounter{}
	e := startWith(t, testCluster.NewNamespace(t), func(o *Options) {
		counter.Renderer = o.Renderer
		o.Renderer, o.Resync, o.HardResync = counter, 500*time.Millisecond, 3*time.Second
	})
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	e.create(newApp(e, "hard", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)}))
	e.waitSyncedHealthy("hard")
	start := counter.hard.Load()
	time.Sleep(7 * time.Second) // about 14 reconciles, two hard-refresh periods
	if n := counter.hard.Load() - start; n < 1 || n > 3 {
		t.Errorf("%d hard renders in 7 s with a 3 s period", n)
	}
}

// TestUnknownArgoCDKeyLoggedOnce: a key of argocd-cm or of
// argocd-cmd-params-cm Argo CD does not document (a misspelling) is logged
// as ignored, once, however many reconciles follow; so is a documented
// argocd-cmd-params-cm key no component reads, with its reason.
func TestUnknownArgoCDKeyLoggedOnce(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	ns := testCluster.NewNamespace(t)
	e := startWith(t, ns, func(o *Options) {
		o.Log, o.Resync = slog.New(slog.NewJSONHandler(logs, nil)), 300*time.Millisecond
	})
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: ns},
		Data: map[string]string{"timeout.reconcilation": "3m", "users.session.duration": "1h"}})
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CmdParamsName, Namespace: ns},
		Data: map[string]string{"controller.status.processers": "5", "server.insecure": "true", "commitserver.log.level": "debug"}})
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	e.create(newApp(e, "logged", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)}))
	e.waitSyncedHealthy("logged")
	reconciles := func() int { return strings.Count(logs.String(), `"msg":"Reconciliation completed"`) }
	after := reconciles()
	e.eventually("several more reconciles", func() string {
		if n := reconciles() - after; n < 5 {
			return fmt.Sprintf("%d reconciles", n)
		}
		return ""
	})
	if n := strings.Count(logs.String(), `"key":"timeout.reconcilation"`); n != 1 {
		t.Errorf("the unknown key was logged %d times:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), `"key":"controller.status.processers"`); n != 1 {
		t.Errorf("the unknown argocd-cmd-params-cm key was logged %d times:\n%s", n, logs.String())
	}
	// A documented key no component reads is logged as having no effect, once.
	if n := strings.Count(logs.String(), `"key":"commitserver.log.level","reason":"Capstan has no commit server`); n != 1 {
		t.Errorf("the key no component reads was logged %d times:\n%s", n, logs.String())
	}
	for _, k := range []string{"users.session.duration", "server.insecure"} {
		if strings.Contains(logs.String(), `"key":"`+k+`"`) {
			t.Errorf("the documented key %s was logged as unknown", k)
		}
	}
}

// TestIgnoreResourceUpdates: with resource.customizations.ignoreResourceUpdates
// naming a field, a change of only that field in the cluster does not
// refresh the Application (it stays Synced though the object drifted); a
// change of another field does, and then the drift shows. With
// resource.ignoreResourceUpdatesEnabled "false", no change is ignored.
func TestIgnoreResourceUpdates(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	ns := testCluster.NewNamespace(t)
	e := startWith(t, ns, func(o *Options) { o.Resync = time.Hour })
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: ns},
		Data: map[string]string{"resource.customizations.ignoreResourceUpdates.ConfigMap": "jsonPointers:\n- /data\n"}})
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n"})
	dests := map[string]string{}
	for _, name := range []string{"quiet", "later"} {
		dests[name] = testCluster.NewNamespace(t)
		e.create(newApp(e, name, "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dests[name]}))
	}
	e.waitSyncedHealthy("quiet")
	e.waitSyncedHealthy("later")
	e.settle("quiet", "later") // the test asks whether the changes below cause a reconcile
	settled := e.app("quiet").Status.ReconciledAt
	ctx := context.Background()
	change := func(app string, f func(cm *corev1.ConfigMap)) {
		cm, err := e.kube.CoreV1().ConfigMaps(dests[app]).Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f(cm)
		if _, err := e.kube.CoreV1().ConfigMaps(dests[app]).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	outOfSync := func(app string) {
		e.eventually(app+" OutOfSync", func() string {
			if st := e.app(app).Status.Sync.Status; st != v1alpha1.SyncStatusCodeOutOfSync {
				return string(st)
			}
			return ""
		})
	}
	change("quiet", func(cm *corev1.ConfigMap) { cm.Data["k"] = "drifted" })
	time.Sleep(3 * time.Second) // room for a refresh that should not happen
	if a := e.app("quiet"); a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || !a.Status.ReconciledAt.Equal(settled) {
		t.Fatalf("a change of an ignored field refreshed the app: %s, reconciled at %v (before: %v)", a.Status.Sync.Status, a.Status.ReconciledAt, settled)
	}
	change("quiet", func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"touched": "yes"} })
	outOfSync("quiet")

	// resource.ignoreResourceUpdatesEnabled "false" turns the rules off,
	// from the moment argocd-cm changes (no reconcile runs in between): a
	// change of the same field then refreshes the other app.
	e.settle("quiet", "later")
	settingsCM, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, settings.CMName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	settingsCM.Data["resource.ignoreResourceUpdatesEnabled"] = "false"
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Update(ctx, settingsCM, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // for the controller to read argocd-cm again
	change("later", func(cm *corev1.ConfigMap) { cm.Data["k"] = "drifted" })
	outOfSync("later")
}

// TestIgnoreJQTimeout: Options.IgnoreJQTimeout
// (--ignore-normalizer-jq-execution-timeout-seconds) bounds the jq path
// expressions of an Application's ignoreDifferences: one that never ends
// fails the comparison with the configured bound named, not the default.
func TestIgnoreJQTimeout(t *testing.T) {
	c, ns := controlNamespace(t)
	e := startWith(t, ns, func(o *Options) { o.IgnoreJQTimeout = 40 * time.Millisecond })
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: one}\n"})
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "endless", Namespace: ns}, Spec: v1alpha1.ApplicationSpec{
		Project:           "default",
		Source:            &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
		Destination:       v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)},
		IgnoreDifferences: []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", JQPathExpressions: []string{"def f: f; f"}}},
	}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(app.Spec.Destination.Namespace).Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "two"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("a comparison error naming the bound", func() string {
		for _, cond := range e.app("endless").Status.Conditions {
			if cond.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(cond.Message, "within 40ms") {
				return ""
			}
		}
		return fmt.Sprint(e.app("endless").Status.Conditions)
	})
}
