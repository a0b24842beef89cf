package manifests_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestTakeOverAnArgoCDInstall puts Capstan in place of a running Argo CD.
// On a cluster of its own, namespace argocd is populated as Argo CD leaves
// it: Argo CD's install (its CRDs, from the release tools/argocd-manifests
// pins, its workloads, RBAC and ConfigMaps), the Secrets its API server
// wrote (server key, admin password), a repository Secret, and an
// Application Argo CD synced: its status and history as Argo CD writes
// them and its resources as Argo CD's controller applied them (tracking
// annotation, last-applied configuration, the argocd-controller field
// manager). Then Capstan's install.yaml is applied over it the way an
// upgrade is, keeping Argo CD's CRDs as installed, and its workloads run.
//
// Capstan must pick the Application up as it is: Synced and Healthy
// without a new sync (history and operation unchanged, no managed object
// written), nothing pruned, and the admin password the users know still
// logging in.
func TestTakeOverAnArgoCDInstall(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	cl, err := localcluster.Start(ctx, localcluster.Options{Workloads: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop() })
	c, err := kube.NewClient(cl.Config)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "argocd"
	createNamespace(t, cl, ns)

	argo := readObjects(t, filepath.Join(argoManifests(t), "install.yaml"))
	apply(t, cl, argo, ns)
	argoCRD := crd()
	if err := c.Get(ctx, client.ObjectKey{Name: "applications.argoproj.io"}, argoCRD); err != nil {
		t.Fatal(err)
	}
	password := leaveArgoCDSecrets(t, c, ns)
	app, managed := leaveSyncedApp(t, c, ns)
	told := leaveNotifications(t, c, ns, app)

	// The upgrade: Capstan's objects applied over Argo CD's by the same
	// field manager, Argo CD's CRDs left as they are.
	_, capstan := splitCRDs(readObjects(t, "install.yaml"))
	applyAll(t, ctx, cl, capstan, ns)
	in := runInstall(t, cl, capstan, ns)
	defer func() {
		if t.Failed() {
			in.dumpLogs(t)
		}
	}()

	// Capstan has looked at the app once it records a newer reconciliation.
	var got v1alpha1.Application
	eventually.Within(t, eventually.Options{Timeout: 2 * time.Minute, Interval: 500 * time.Millisecond}, "Capstan reconciling the app", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), &got); err != nil {
			t.Fatal(err)
		}
		if got.Status.ReconciledAt != nil && got.Status.ReconciledAt.After(app.Status.ReconciledAt.Time) &&
			got.Status.Health.Status == "Healthy" {
			return ""
		}
		return fmt.Sprintf("status %+v", got.Status)
	})
	// A few more reconciliations, in which a needless sync would start.
	time.Sleep(5 * time.Second) // room for a sync that should not happen
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || got.Status.Sync.Revision != app.Status.Sync.Revision {
		t.Errorf("sync status %s at %s, want Synced at %s; conditions %+v", got.Status.Sync.Status, got.Status.Sync.Revision, app.Status.Sync.Revision, got.Status.Conditions)
	}
	if len(got.Status.History) != 1 || got.Operation != nil ||
		got.Status.OperationState == nil || !got.Status.OperationState.StartedAt.Equal(&app.Status.OperationState.StartedAt) {
		t.Errorf("the app was synced again: history %d entries, operation %+v, operation state %+v", len(got.Status.History), got.Operation, got.Status.OperationState)
	}
	for _, m := range managed {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(m.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(m), live); err != nil {
			t.Errorf("%s/%s/%s: %v", m.GetKind(), m.GetNamespace(), m.GetName(), err)
		} else if !equality.Semantic.DeepEqual(objectWrites(live), objectWrites(m)) {
			t.Errorf("%s/%s/%s was written by Capstan: nothing had changed (field managers %+v, were %+v)", m.GetKind(), m.GetNamespace(), m.GetName(),
				objectWrites(live), objectWrites(m))
		}
	}
	after := crd()
	if err := c.Get(ctx, client.ObjectKey{Name: "applications.argoproj.io"}, after); err != nil || after.GetGeneration() != argoCRD.GetGeneration() {
		t.Errorf("Argo CD's Application CRD was changed (generation %d, was %d): %v", after.GetGeneration(), argoCRD.GetGeneration(), err)
	}
	checkAPI(t, in.ip("argocd-server"), password, 1)
	// Argo CD had told one webhook of the sync, not the other: Capstan's
	// notifications controller tells the other only.
	eventually.True(t, "a webhook told", func() bool { return len(told()) > 0 })
	time.Sleep(2 * time.Second) // room for a call that should not come
	if got := told(); len(got) != 1 || got[0] != "/untold" {
		t.Errorf("webhooks told %q, want only /untold", got)
	}
}

func crd() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	return u
}

// leaveArgoCDSecrets writes what Argo CD's API server and Redis init
// container leave in argocd-secret and argocd-redis, and returns the admin
// password.
func leaveArgoCDSecrets(t *testing.T, c client.Client, ns string) string {
	t.Helper()
	ctx := context.Background()
	const password = "users-know-this-one"
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "argocd-secret"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{
		"server.secretkey":    []byte("YXJnby1jZC1zZXJ2ZXIta2V5LWZvci10ZXN0cw=="),
		"admin.password":      hash,
		"admin.passwordMtime": []byte(time.Now().UTC().Format(time.RFC3339)),
	}
	if err := c.Update(ctx, s, client.FieldOwner("argocd-server")); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-redis", Namespace: ns},
		Data:       map[string][]byte{"auth": []byte("redis-password-argo-cd-made")},
	}); err != nil {
		t.Fatal(err)
	}
	return password
}

// leaveNotifications configures two webhooks in argocd-notifications-cm
// and subscribes app to both, with Argo CD's notified annotation saying
// the first was told of the app's sync already. It returns the paths the
// webhooks have been called on so far.
func leaveNotifications(t *testing.T, c client.Client, ns string, app *v1alpha1.Application) func() []string {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var paths []string
	hook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "argocd-notifications-cm"}, cm); err != nil {
		t.Fatal(err)
	}
	// The SHA-1 of the condition, in unpadded URL-safe base64, names it
	// in Argo CD's state.
	const when, whenHash = "app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']", "IwKhHw9Hu8IE3z5Y8CQE4vReLYs"
	cm.Data = map[string]string{
		"service.webhook.told":      "url: " + hook.URL + "/told\n",
		"service.webhook.untold":    "url: " + hook.URL + "/untold\n",
		"trigger.on-sync-succeeded": "- when: " + when + "\n  oncePer: app.status.operationState?.syncResult?.revision\n  send: [synced]\n",
		"template.synced":           "message: synced\n",
	}
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	live := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), live); err != nil {
		t.Fatal(err)
	}
	sent := time.Now().Add(-time.Hour).Unix()
	live.Annotations = map[string]string{
		"notifications.argoproj.io/subscribe.on-sync-succeeded.told":   "",
		"notifications.argoproj.io/subscribe.on-sync-succeeded.untold": "",
		"notified.notifications.argoproj.io":                           fmt.Sprintf(`{"%s:on-sync-succeeded:[0].%s:told:":%d}`, app.Status.Sync.Revision, whenHash, sent),
	}
	if err := c.Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

// leaveSyncedApp publishes the guestbook demo app, registers its
// repository and leaves it as Argo CD's controller does after a sync:
// the objects applied with Argo CD's tracking annotation and client-side
// apply's record, and the Application's status and history. It returns
// the Application and the managed objects as they are in the cluster.
func leaveSyncedApp(t *testing.T, c client.Client, ns string) (*v1alpha1.Application, []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "demo")
	files := map[string]string{}
	var managed []*unstructured.Unstructured
	for _, f := range []string{"guestbook-ui-deployment.yaml", "guestbook-ui-svc.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", "guestbook", f))
		if err != nil {
			t.Fatal(err)
		}
		files["guestbook/"+f] = string(data)
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatal(err)
		}
		managed = append(managed, u)
	}
	sha := remote.Commit(t, "guestbook", files)
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "repo-demo", Namespace: ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}},
		StringData: map[string]string{"type": "git", "url": remote.URL, "username": srv.Username, "password": srv.Password},
	}); err != nil {
		t.Fatal(err)
	}
	const dest = "guestbook"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dest}}); err != nil {
		t.Fatal(err)
	}
	var resources []v1alpha1.ResourceStatus
	for _, u := range managed {
		u.SetNamespace(dest)
		gvk := u.GroupVersionKind()
		// Argo CD's default tracking (annotation) and its client-side
		// apply's record of what it applied.
		u.SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": "guestbook:" + gvk.Group + "/" + gvk.Kind + ":" + dest + "/" + u.GetName()})
		applied, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		u.SetAnnotations(map[string]string{
			"argocd.argoproj.io/tracking-id":                   u.GetAnnotations()["argocd.argoproj.io/tracking-id"],
			"kubectl.kubernetes.io/last-applied-configuration": string(applied) + "\n",
		})
		if err := c.Create(ctx, u, client.FieldOwner("argocd-controller")); err != nil {
			t.Fatal(err)
		}
		resources = append(resources, v1alpha1.ResourceStatus{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: dest, Name: u.GetName(),
			Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: "Healthy"}})
	}
	// Someone else's object in the same namespace: not the app's to prune.
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-from-git", Namespace: dest}}); err != nil {
		t.Fatal(err)
	}
	other := &unstructured.Unstructured{}
	other.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	other.SetNamespace(dest)
	other.SetName("not-from-git")
	managed = append(managed, other)
	waitAvailable(t, c, dest, "guestbook-ui")
	for _, u := range managed {
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			t.Fatal(err)
		}
	}

	source := v1alpha1.ApplicationSource{RepoURL: remote.URL, TargetRevision: "HEAD", Path: "guestbook"}
	destination := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}
	synced := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	started := metav1.NewTime(synced.Add(-2 * time.Second))
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default", Source: &source, Destination: destination,
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}},
		},
		Status: v1alpha1.ApplicationStatus{
			Sync:         v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: sha, ComparedTo: v1alpha1.ComparedTo{Source: source, Destination: destination}},
			Health:       v1alpha1.AppHealthStatus{Status: "Healthy"},
			Resources:    resources,
			SourceType:   "Directory",
			ReconciledAt: &synced,
			History:      v1alpha1.RevisionHistories{{ID: 0, Revision: sha, DeployedAt: synced, DeployStartedAt: &started, Source: source}},
			OperationState: &v1alpha1.OperationState{
				Operation:  v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: sha}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}},
				Phase:      "Succeeded",
				Message:    "successfully synced (all tasks run)",
				StartedAt:  started,
				FinishedAt: &synced,
				SyncResult: &v1alpha1.SyncOperationResult{Revision: sha, Source: source},
			},
		},
	}
	if err := c.Create(ctx, app.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	return app, managed
}

// waitAvailable waits for Deployment ns/name to be available (kwok plays
// its pods' kubelet).
func waitAvailable(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	eventually.Within(t, eventually.Options{Interval: 200 * time.Millisecond}, "Deployment/"+ns+"/"+name+" available", func() string {
		d := &appsv1.Deployment{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			t.Fatal(err)
		}
		if d.Status.AvailableReplicas > 0 && d.Status.ObservedGeneration == d.Generation {
			return ""
		}
		return fmt.Sprintf("status %+v", d.Status)
	})
}

// objectWrites are an object's field managers but Kubernetes' own
// (kube-controller-manager marking a Deployment's revision and status,
// whenever it likes) and those of the status: a write of the object by
// anyone else changes them (its manager's time, at least).
func objectWrites(u *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range u.GetManagedFields() {
		if e.Subresource == "" && !strings.HasPrefix(e.Manager, "kube-") {
			out = append(out, e)
		}
	}
	return out
}
