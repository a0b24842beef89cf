package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/render/kustomize"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var testCluster *localcluster.Cluster

func TestMain(m *testing.M) {
	// A Kustomize build with --enable-helm runs this binary as its helm.
	if kustomize.IsHelmRelay(os.Args[0]) {
		os.Exit(kustomize.RunHelmRelay(os.Args[0], os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(localcluster.RunTests(m, localcluster.Options{Workloads: true}, &testCluster))
}

const guestbookDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: guestbook-ui
spec:
  replicas: 2
  selector: {matchLabels: {app: guestbook-ui}}
  template:
    metadata: {labels: {app: guestbook-ui}}
    spec:
      containers: [{name: guestbook-ui, image: registry.local/guestbook-ui:0.1.0}]
`

const guestbookService = `apiVersion: v1
kind: Service
metadata:
  name: guestbook-ui
spec:
  ports: [{port: 80}]
  selector: {app: guestbook-ui}
`

// env is a running controller with a control namespace of its own.
type env struct {
	t       *testing.T
	ns      string
	client  client.Client
	kube    kubernetes.Interface
	timeout time.Duration
	// stop stops the controller (also done at the end of the test).
	stop func()
}

// start runs a controller with a new control namespace.
func start(t *testing.T) *env {
	localcluster.Need(t)
	t.Helper()
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	return startIn(t, testCluster.NewNamespace(t))
}

// controlNamespace installs the CRDs and returns a client and a new
// namespace, for a test that prepares objects before it starts a
// controller there.
func controlNamespace(t *testing.T) (client.Client, string) {
	localcluster.Need(t)
	t.Helper()
	c, err := kube.NewClient(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	return c, testCluster.NewNamespace(t)
}

// startIn runs a controller whose control namespace is ns.
func startIn(t *testing.T, ns string) *env {
	t.Helper()
	return startWith(t, ns, nil)
}

// startWith runs a controller whose control namespace is ns, with options
// changed by change.
func startWith(t *testing.T, ns string, change func(*Options)) *env {
	localcluster.Need(t)
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := kube.NewClient(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ns: ns, client: c, kube: kubernetes.NewForConfigOrDie(testCluster.Config), timeout: 90 * time.Second}
	done := make(chan error, 1)
	opts := Options{
		Config: testCluster.Config, Namespace: e.ns, Resync: 2 * time.Second,
		Renderer: repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second}),
		Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	if change != nil {
		change(&opts)
	}
	go func() { done <- Run(ctx, opts) }()
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("controller: %v", err)
			}
		})
	}
	t.Cleanup(e.stop)
	return e
}

// eventually polls cond until it returns "" (done) or the env's timeout
// passes.
func (e *env) eventually(what string, cond func() string) {
	e.t.Helper()
	eventually.Within(e.t, eventually.Options{Timeout: e.timeout, Interval: 200 * time.Millisecond}, what, cond)
}

// settle waits until the named Applications have not been reconciled for
// a while: tests that ask whether a change causes a reconcile first let
// the ones that follow a sync pass.
func (e *env) settle(names ...string) {
	e.t.Helper()
	e.eventually("no more reconciles of "+strings.Join(names, ", "), func() string {
		before := make([]*metav1.Time, len(names))
		for i, name := range names {
			before[i] = e.app(name).Status.ReconciledAt
		}
		time.Sleep(1500 * time.Millisecond) // a quiet period: no reconcile may land in it
		for i, name := range names {
			if after := e.app(name).Status.ReconciledAt; !after.Equal(before[i]) {
				return name + " reconciled at " + after.String()
			}
		}
		return ""
	})
}

// waitReconciles waits until the named Application has been reconciled n
// more times, each seen as a new reconciledAt: a test that checks a
// reconcile does not do something first lets several of them run.
func (e *env) waitReconciles(name string, n int) {
	e.t.Helper()
	last, seen := e.app(name).Status.ReconciledAt, 0
	e.eventually(fmt.Sprintf("%d more reconciles of %s", n, name), func() string {
		if at := e.app(name).Status.ReconciledAt; !at.Equal(last) {
			last, seen = at, seen+1
		}
		if seen < n {
			return fmt.Sprintf("%d reconciles", seen)
		}
		return ""
	})
}

func (e *env) app(name string) *v1alpha1.Application {
	a := &v1alpha1.Application{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, a); err != nil {
		e.t.Fatal(err)
	}
	return a
}

// update changes an Application as a user would, retrying when the
// controller wrote it in between.
func (e *env) update(name string, change func(*v1alpha1.Application)) {
	e.t.Helper()
	if err := retryUpdate(e, e.ns, name, change); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) waitSyncedHealthy(name string) {
	e.t.Helper()
	e.eventually("Synced and Healthy", func() string {
		a := &v1alpha1.Application{}
		if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, a); err != nil {
			return err.Error()
		}
		if a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == v1alpha1.HealthStatusHealthy {
			return ""
		}
		return fmt.Sprintf("%s/%s conditions %v operation %+v", a.Status.Sync.Status, a.Status.Health.Status, a.Status.Conditions, a.Status.OperationState)
	})
}

func TestDirectoryAppLifecycle(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "guestbook", map[string]string{
		"guestbook/deployment.yaml": guestbookDeployment,
		"guestbook/service.yaml":    guestbookService,
	})
	dest := e.ns + "-guestbook"
	t.Cleanup(func() { _ = e.kube.CoreV1().Namespaces().Delete(ctx, dest, metav1.DeleteOptions{}) })
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: e.ns, Finalizers: []string{resourcesFinalizer}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "guestbook", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy: &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true},
				SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"},
			},
		},
	}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}

	t.Run("becomes Synced and Healthy", func(t *testing.T) {
		e.waitSyncedHealthy("guestbook")
		a := e.app("guestbook")
		if a.Status.Sync.Revision != first || a.Status.SourceType != v1alpha1.SourceTypeDirectory {
			t.Errorf("revision %s type %s", a.Status.Sync.Revision, a.Status.SourceType)
		}
		if len(a.Status.History) != 1 || a.Status.History[0].Revision != first {
			t.Errorf("history = %+v", a.Status.History)
		}
		e.eventually("an OperationCompleted Event on the Application", func() string {
			list, err := e.kube.EventsV1().Events(e.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err.Error()
			}
			var seen []string
			for _, ev := range list.Items {
				if ev.Regarding.Kind == "Application" && ev.Regarding.Name == "guestbook" && ev.Reason == "OperationCompleted" &&
					ev.Note == "Automated sync operation to "+first+" succeeded" {
					return ""
				}
				seen = append(seen, ev.Reason+": "+ev.Note)
			}
			return fmt.Sprintf("events %v", seen)
		})
		if len(a.Status.Summary.Images) != 1 || a.Status.Summary.Images[0] != "registry.local/guestbook-ui:0.1.0" {
			t.Errorf("summary images = %v", a.Status.Summary.Images)
		}
	})

	t.Run("a new commit is synced", func(t *testing.T) {
		remote.Commit(t, "config", map[string]string{"guestbook/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guestbook-config}\ndata: {theme: dark}\n"})
		e.eventually("ConfigMap from the new commit", func() string {
			if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "guestbook-config", metav1.GetOptions{}); err != nil {
				return err.Error()
			}
			return ""
		})
	})

	t.Run("self-heal reverts a manual change", func(t *testing.T) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			scale := &appsv1.Deployment{}
			if err := e.client.Get(ctx, client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, scale); err != nil {
				return err
			}
			scale.Spec.Replicas = ptr.To[int32](5)
			return e.client.Update(ctx, scale, client.FieldOwner("kubectl-edit"))
		})
		if err != nil {
			t.Fatal(err)
		}
		e.eventually("replicas back to 2", func() string {
			d, err := e.kube.AppsV1().Deployments(dest).Get(ctx, "guestbook-ui", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			if *d.Spec.Replicas != 2 {
				return fmt.Sprintf("replicas %d", *d.Spec.Replicas)
			}
			return ""
		})
	})

	t.Run("a removed file is pruned", func(t *testing.T) {
		remote.Commit(t, "drop config", map[string]string{"guestbook/config.yaml": ""})
		e.eventually("ConfigMap pruned", func() string {
			if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "guestbook-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Sprintf("still there (%v)", err)
			}
			return ""
		})
		e.waitSyncedHealthy("guestbook")
	})

	t.Run("unreachable Git is a ComparisonError and prunes nothing", func(t *testing.T) {
		e.update("guestbook", func(a *v1alpha1.Application) { a.Spec.Source.RepoURL = "file:///nonexistent/repo.git" })
		e.eventually("ComparisonError", func() string {
			for _, c := range e.app("guestbook").Status.Conditions {
				if c.Type == v1alpha1.ApplicationConditionComparisonError {
					return ""
				}
			}
			return "no condition"
		})
		e.waitReconciles("guestbook", 2)
		if _, err := e.kube.AppsV1().Deployments(dest).Get(ctx, "guestbook-ui", metav1.GetOptions{}); err != nil {
			t.Errorf("deployment gone while Git was unreachable: %v", err)
		}
		e.update("guestbook", func(a *v1alpha1.Application) { a.Spec.Source.RepoURL = remote.URL })
		e.waitSyncedHealthy("guestbook")
	})

	t.Run("deleting with the finalizer removes the resources", func(t *testing.T) {
		if err := e.client.Delete(ctx, e.app("guestbook")); err != nil {
			t.Fatal(err)
		}
		e.eventually("resources and app deleted", func() string {
			if _, err := e.kube.AppsV1().Deployments(dest).Get(ctx, "guestbook-ui", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return "deployment still there"
			}
			if _, err := e.kube.CoreV1().Services(dest).Get(ctx, "guestbook-ui", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return "service still there"
			}
			a := &v1alpha1.Application{}
			if err := e.client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "guestbook"}, a); !apierrors.IsNotFound(err) {
				return "application still there"
			}
			return ""
		})
	})
}

func TestForbiddenDestinationAppliesNothing(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "narrow", Namespace: e.ns},
		Spec:       v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "allowed-*"}}},
	}
	if err := e.client.Create(ctx, proj); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: forbidden}\n"})
	dest := e.ns + "-forbidden"
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "forbidden", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "narrow",
			Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}, SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"}},
		},
	}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.eventually("InvalidSpecError", func() string {
		for _, c := range e.app("forbidden").Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionInvalidSpecError && strings.Contains(c.Message, "do not match any of the allowed destinations") {
				return ""
			}
		}
		return fmt.Sprintf("conditions %v", e.app("forbidden").Status.Conditions)
	})
	if _, err := e.kube.CoreV1().Namespaces().Get(ctx, dest, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the forbidden destination was touched: %v", err)
	}
}

// TestOperationLeftRunningIsCompleted starts a controller on an Application
// whose recorded operation is Running, as a controller killed mid-sync
// leaves it, and expects the operation to be run to completion.
func TestOperationLeftRunningIsCompleted(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	c, ns := controlNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: resumed}\n"})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "resumed", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
		},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app.Status.OperationState = &v1alpha1.OperationState{
		Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"}},
		Phase:     v1alpha1.OperationRunning, Message: "syncing", StartedAt: metav1.Now(),
	}
	if err := c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}

	e := startIn(t, ns)
	e.eventually("operation completed", func() string {
		st := e.app("resumed").Status.OperationState
		if st != nil && st.Phase == v1alpha1.OperationSucceeded {
			return ""
		}
		return fmt.Sprintf("%+v", st)
	})
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "resumed", metav1.GetOptions{}); err != nil {
		t.Errorf("the resumed sync did not apply: %v", err)
	}
}

// TestHelmKustomizeAndSecondCluster syncs a Helm app and a Kustomize app,
// one of them to a second cluster registered through a cluster Secret, and
// reads a custom Lua health check from argocd-cm.
func TestHelmKustomizeAndSecondCluster(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	second, err := localcluster.Start(ctx, localcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	e := start(t)
	dest := e.ns + "-apps"
	t.Cleanup(func() { _ = e.kube.CoreV1().Namespaces().Delete(ctx, dest, metav1.DeleteOptions{}) })

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "second", Namespace: e.ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}},
		StringData: map[string]string{"name": "second", "server": second.Config.Host,
			"config": `{"bearerToken":"` + second.Config.BearerToken + `","tlsClientConfig":{"insecure":true}}`},
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: e.ns},
		Data: map[string]string{"resource.customizations.health.ConfigMap": `
if obj.data ~= nil and obj.data.ready == "yes" then
  return {status = "Healthy", message = "ready"}
end
return {status = "Progressing", message = "not ready yet"}`},
	}
	for _, o := range []client.Object{secret, cm} {
		if err := e.client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "apps", map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/values.yaml":       "ready: \"no\"\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  ready: {{ .Values.ready | quote }}\n",
		"kust/kustomization.yaml": "resources: [cm.yaml]\nnamePrefix: k-\n",
		"kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {ready: \"yes\"}\n",
	})
	newApp := func(name, path string, dst v1alpha1.ApplicationDestination, helm *v1alpha1.ApplicationSourceHelm) {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: path, Helm: helm},
				Destination: dst,
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}, SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"}},
			},
		}
		if err := e.client.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	newApp("helm-app", "chart", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		&v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "ready", Value: "yes"}}})
	newApp("kustomize-app", "kust", v1alpha1.ApplicationDestination{Name: "second", Namespace: "remote"}, nil)

	e.waitSyncedHealthy("helm-app")
	e.waitSyncedHealthy("kustomize-app")
	if got := e.app("helm-app").Status.SourceType; got != v1alpha1.SourceTypeHelm {
		t.Errorf("helm-app source type %s", got)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "helm-app-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("Helm app not applied: %v", err)
	}
	remoteKube := kubernetes.NewForConfigOrDie(second.Config)
	if _, err := remoteKube.CoreV1().ConfigMaps("remote").Get(ctx, "k-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("Kustomize app not applied to the second cluster: %v", err)
	}
	// The Lua check decides the ConfigMap's health: "ready: yes" is Healthy.
	for _, r := range e.app("helm-app").Status.Resources {
		if r.Kind == "ConfigMap" && (r.Health == nil || r.Health.Message != "ready") {
			t.Errorf("custom health not applied: %+v", r.Health)
		}
	}
}

func TestRetryThenFailAndRollback(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "v1", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: versioned}\ndata: {version: one}\n"})
	dest := e.ns + "-rb"
	t.Cleanup(func() { _ = e.kube.CoreV1().Namespaces().Delete(ctx, dest, metav1.DeleteOptions{}) })
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "rb", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy: &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{},
				SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"},
				Retry:       &v1alpha1.RetryStrategy{Limit: 2, Backoff: &v1alpha1.Backoff{Duration: "1s", MaxDuration: "2s"}},
			},
		},
	}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("rb")

	// A broken commit fails to apply: two retries, then Failed.
	remote.Commit(t, "broken", map[string]string{"app/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: broken}\nspec:\n  ports: [{port: 999999}]\n"})
	e.eventually("operation Failed after retries", func() string {
		st := e.app("rb").Status.OperationState
		if st != nil && st.Phase == v1alpha1.OperationFailed && st.RetryCount == 2 {
			for _, c := range e.app("rb").Status.Conditions {
				if c.Type == v1alpha1.ApplicationConditionSyncError && strings.HasPrefix(c.Message, "Failed sync attempt to ") {
					return ""
				}
			}
			return "no SyncError condition"
		}
		return fmt.Sprintf("%+v", st)
	})

	// A rollback is refused while automated sync is on.
	h := e.app("rb").Status.History[0]
	if h.Revision != first {
		t.Fatalf("history[0] = %+v", h)
	}
	e.update("rb", func(a *v1alpha1.Application) {
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: h.Revision, Source: &h.Source}, InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"}}
	})
	// The refusal is recorded as an Event (the status soon shows the
	// automated sync again, which retries the broken commit).
	e.eventually("rollback refused", func() string {
		list, err := e.kube.EventsV1().Events(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ev := range list.Items {
			if ev.Regarding.Name == "rb" && ev.Type == corev1.EventTypeWarning &&
				strings.HasSuffix(ev.Note, "error: rollback cannot be initiated when auto-sync is enabled") {
				return ""
			}
		}
		return "no Event of the refusal"
	})
	if a := e.app("rb"); a.Operation != nil || len(a.Status.History) != 1 {
		t.Fatalf("after the refusal: operation %v, history %+v", a.Operation, a.Status.History)
	}

	// Roll back to the first revision: automated sync off, then an
	// operation with the history entry's revision and source.
	e.update("rb", func(a *v1alpha1.Application) { a.Spec.SyncPolicy.Automated = nil })
	e.update("rb", func(a *v1alpha1.Application) {
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: h.Revision, Source: &h.Source, Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"}}
	})
	e.eventually("rolled back", func() string {
		a := e.app("rb")
		st := a.Status.OperationState
		if a.Operation == nil && st != nil && st.Phase == v1alpha1.OperationSucceeded && st.SyncResult.Revision == first {
			return ""
		}
		return fmt.Sprintf("operation %v state %+v", a.Operation, st)
	})
	if h := e.app("rb").Status.History; len(h) != 2 || h[1].Revision != first || h[1].InitiatedBy.Username != "admin" {
		t.Errorf("history after rollback = %+v", h)
	}
}

// TestLabelTracking follows argocd-cm's application.resourceTrackingMethod:
// with "label", applied objects carry app.kubernetes.io/instance (or the
// label application.instanceLabelKey names) and are found (and pruned) by
// it.
func TestLabelTracking(t *testing.T) {
	localcluster.Need(t)
	for _, key := range []string{"", "example.com/owner"} {
		t.Run("instanceLabelKey="+key, func(t *testing.T) { labelTracking(t, key) })
	}
}

// labelTracking syncs and prunes with label tracking by labelKey
// (application.instanceLabelKey; "" for the default).
func labelTracking(t *testing.T, labelKey string) {
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, testCluster.Config); err != nil {
		t.Fatal(err)
	}
	ns := testCluster.NewNamespace(t)
	c, err := kube.NewClient(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns},
		Data: map[string]string{"application.resourceTrackingMethod": "label", "application.instanceLabelKey": labelKey}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	want := labelKey
	if want == "" {
		want = v1alpha1.LabelAppInstance
	}
	e := startIn(t, ns)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"app/b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "labelled", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
		},
	}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("labelled")
	got, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[want] != "labelled" || (labelKey != "" && got.Labels[v1alpha1.LabelAppInstance] != "") {
		t.Errorf("labels = %v", got.Labels)
	}
	if _, has := got.Annotations[v1alpha1.AnnotationTrackingID]; has {
		t.Error("label tracking also wrote the tracking-id annotation")
	}
	remote.Commit(t, "drop b", map[string]string{"app/b.yaml": ""})
	e.eventually("b pruned", func() string {
		if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("still there (%v)", err)
		}
		return ""
	})
}
