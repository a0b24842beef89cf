package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// startWithController runs a Server and, in the same namespace, a
// controller, as capstan run does. The tests that use it run side by side,
// and controllers track live objects by Application name: each names its
// Applications differently from the others'.
func startWithController(t *testing.T) *fixture {
	localcluster.Need(t)
	t.Helper()
	if err := kube.InstallCRDs(context.Background(), kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, true)
	runController(t, f.ns, repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second}), nil)
	return f
}

// runController runs a controller for the control namespace ns until the
// test ends, with the periodic refresh and the repository poll an hour
// away; changes, if set, takes pushed repository URLs as from webhooks.
func runController(tb testing.TB, ns string, renderer repo.Renderer, changes <-chan repo.Change) {
	localcluster.Need(tb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Options{
			Config: kubeCluster.Config, Namespace: ns, Resync: time.Hour, RepoPoll: time.Hour, RepoChanges: changes,
			Renderer: renderer, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		})
	}()
	tb.Cleanup(func() { cancel(); <-done })
}

// eventually polls the Application until ok accepts it.
func (f *fixture) eventually(name, what string, ok func(*v1alpha1.Application) bool) *v1alpha1.Application {
	f.t.Helper()
	var app *v1alpha1.Application
	eventually.String(f.t, "application "+name+": "+what, func() string {
		app = &v1alpha1.Application{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, app); err == nil && ok(app) {
			return ""
		}
		return fmt.Sprintf("status %+v", app.Status)
	})
	return app
}

func syncedAt(rev string) func(*v1alpha1.Application) bool {
	return func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase.Completed() && st.SyncResult != nil && st.SyncResult.Revision == rev
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
`

func configMap(v string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: " + v + "}\n"
}

// TestApplicationLifecycle drives one Application through the API with a
// controller behind it: manifests and diffs before and after a sync, the
// resource tree with owned objects, live objects and events, history and
// rollback, the event stream, edits and terminating a running sync.
func TestApplicationLifecycle(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startWithController(t)
	ctx := context.Background()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMap("one"), "app/deploy.yaml": deployment})
	admin := f.adminToken()

	body := fmt.Sprintf(`{"metadata":{"name":"web"},"spec":{"project":"default","destination":{"server":"https://kubernetes.default.svc","namespace":%q},
		"source":{"repoURL":%q,"path":"app","targetRevision":"main"}}}`, dest, remote.URL)
	if code := f.call("POST", "/api/v1/applications", body, admin, nil); code != 200 {
		t.Fatalf("create: %d", code)
	}
	events := f.stream(t, "/api/v1/stream/applications?name=web", admin)

	var manifests manifestResponse
	if code := f.call("GET", "/api/v1/applications/web/manifests", "", admin, &manifests); code != 200 || len(manifests.Manifests) != 2 || manifests.Revision != first {
		t.Fatalf("manifests: %d %+v", code, manifests)
	}
	var diffs struct{ Items []appstate.ResourceDiff }
	if code := f.call("GET", "/api/v1/applications/web/managed-resources", "", admin, &diffs); code != 200 || len(diffs.Items) != 2 ||
		!diffs.Items[0].Modified || diffs.Items[0].LiveState != "null" || !strings.Contains(diffs.Items[0].TargetState, `"name":"settings"`) {
		t.Fatalf("managed resources before the first sync: %d %+v", code, diffs.Items)
	}

	if code := f.call("POST", "/api/v1/applications/web/sync", `{}`, admin, nil); code != 200 {
		t.Fatalf("sync: %d", code)
	}
	f.eventually("web", "synced at the first commit", syncedAt(first))
	if code := f.call("GET", "/api/v1/applications/web/managed-resources?kind=ConfigMap", "", admin, &diffs); code != 200 || len(diffs.Items) != 1 ||
		diffs.Items[0].Modified || !strings.Contains(diffs.Items[0].LiveState, `"v":"one"`) || diffs.Items[0].NormalizedLiveState == "" {
		t.Fatalf("managed resources after the sync: %d %+v", code, diffs.Items)
	}
	waitFor(t, events, "the stream shows the sync's result", func(e applicationEvent) bool {
		return e.Type == "MODIFIED" && e.Application.Status.OperationState != nil && e.Application.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})

	// A ReplicaSet and Pod owned by the Deployment, as the workload
	// controllers would make them, join the tree.
	deploy := &appsv1.Deployment{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "web"}, deploy); err != nil {
		t.Fatal(err)
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: dest, Labels: map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: deploy.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Selector: deploy.Spec.Selector, Template: deploy.Spec.Template}}
	if err := f.c.Create(ctx, rs); err != nil {
		t.Fatal(err)
	}
	// Without a controller manager nobody makes the default ServiceAccount
	// a Pod needs.
	if err := f.c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: dest}}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1-a", Namespace: dest,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: deploy.Spec.Template.Spec}
	if err := f.c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	stranger := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: dest}}
	if err := f.c.Create(ctx, stranger); err != nil {
		t.Fatal(err)
	}
	var tree appstate.Tree
	if code := f.call("GET", "/api/v1/applications/web/resource-tree", "", admin, &tree); code != 200 {
		t.Fatalf("resource tree: %d", code)
	}
	rsNode, podNode := tree.Find("apps", "ReplicaSet", dest, "web-1"), tree.Find("", "Pod", dest, "web-1-a")
	if len(tree.Nodes) != 4 || rsNode == nil || podNode == nil || rsNode.ParentRefs[0].Kind != "Deployment" || podNode.ParentRefs[0].Name != "web-1" ||
		len(podNode.Images) != 1 || len(podNode.Info) != 3 || podNode.Info[1].Name != "Node" || tree.Find("", "ConfigMap", dest, "stranger") != nil {
		t.Fatalf("resource tree: %+v", tree.Nodes)
	}
	var live map[string]string
	if code := f.call("GET", "/api/v1/applications/web/resource?kind=Pod&version=v1&namespace="+dest+"&resourceName=web-1-a", "", admin, &live); code != 200 ||
		!strings.Contains(live["manifest"], `"name":"web-1-a"`) {
		t.Fatalf("live pod: %d %v", code, live)
	}
	if code := f.call("GET", "/api/v1/applications/web/resource?kind=ConfigMap&version=v1&namespace="+dest+"&resourceName=stranger", "", admin, nil); code != 404 {
		t.Errorf("an object outside the tree: %d, want 404", code)
	}
	var appEvents corev1.EventList
	f.pollCall(t, "GET", "/api/v1/applications/web/events", admin, &appEvents, func() bool {
		for _, e := range appEvents.Items {
			if e.Reason == "OperationCompleted" {
				return true
			}
		}
		return false
	})

	// A second commit, then a rollback to the first.
	second := remote.Commit(t, "two", map[string]string{"app/cm.yaml": configMap("two")})
	if code := f.call("POST", "/api/v1/applications/web/sync", `{}`, admin, nil); code != 200 {
		t.Fatalf("second sync: %d", code)
	}
	app := f.eventually("web", "synced at the second commit", syncedAt(second))
	if len(app.Status.History) != 2 {
		t.Fatalf("history: %+v", app.Status.History)
	}
	if code := f.call("POST", "/api/v1/applications/web/rollback", fmt.Sprintf(`{"id":%d}`, app.Status.History[0].ID), admin, nil); code != 200 {
		t.Fatalf("rollback: %d", code)
	}
	app = f.eventually("web", "rolled back", syncedAt(first))
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, cm); err != nil || cm.Data["v"] != "one" {
		t.Fatalf("after the rollback: %v %v", err, cm.Data)
	}
	if h := app.Status.History; len(h) != 3 || h[2].Revision != first || h[2].Source.Path != "app" {
		t.Errorf("the rollback's history entry: %+v", h)
	}
	if code := f.call("POST", "/api/v1/applications/web/rollback", `{"id":99}`, admin, nil); code != 400 {
		t.Errorf("rollback to a missing id: %d, want 400", code)
	}

	// Edits.
	if code := f.call("PATCH", "/api/v1/applications/web", `{"patch":"{\"metadata\":{\"labels\":{\"team\":\"a\"}}}","patchType":"merge"}`, admin, &app); code != 200 || app.Labels["team"] != "a" {
		t.Errorf("merge patch: %d %v", code, app.Labels)
	}
	if code := f.call("PATCH", "/api/v1/applications/web", `{"patch":"[{\"op\":\"replace\",\"path\":\"/spec/source/targetRevision\",\"value\":\"HEAD\"}]","patchType":"json"}`, admin, &app); code != 200 ||
		app.Spec.Source.TargetRevision != "HEAD" {
		t.Errorf("JSON patch: %d %+v", code, app.Spec.Source)
	}
	if code := f.call("PATCH", "/api/v1/applications/web", `{"patch":"[{\"op\":\"remove\",\"path\":\"/nothing\"}]","patchType":"json"}`, admin, nil); code != 400 {
		t.Errorf("a JSON patch that does not apply: %d, want 400", code)
	}
	spec := app.Spec
	spec.Project = "missing"
	data, _ := json.Marshal(spec)
	if code := f.call("PUT", "/api/v1/applications/web/spec", string(data), admin, nil); code != 400 {
		t.Errorf("a spec naming a missing project: %d, want 400", code)
	}
	spec.Project, spec.Source.TargetRevision = "default", "main"
	data, _ = json.Marshal(spec)
	if code := f.call("PUT", "/api/v1/applications/web/spec", string(data), admin, nil); code != 200 {
		t.Errorf("spec update: %d", code)
	}

	// Terminating a sync stuck on a PreSync hook that never completes.
	if code := f.call("DELETE", "/api/v1/applications/web/operation", "", admin, nil); code != 400 {
		t.Errorf("terminate without an operation: %d, want 400", code)
	}
	remote.Commit(t, "hook", map[string]string{"app/hook.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, annotations: {argocd.argoproj.io/hook: PreSync}}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: m, image: busybox}]}}}
`})
	if code := f.call("POST", "/api/v1/applications/web/sync", `{}`, admin, nil); code != 200 {
		t.Fatalf("hook sync: %d", code)
	}
	f.eventually("web", "the hook sync runs", func(a *v1alpha1.Application) bool {
		return a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationRunning
	})
	if code := f.call("DELETE", "/api/v1/applications/web/operation", "", admin, nil); code != 200 {
		t.Fatalf("terminate: %d", code)
	}
	app = f.eventually("web", "the sync is terminated", func(a *v1alpha1.Application) bool {
		return a.Operation == nil && a.Status.OperationState != nil && a.Status.OperationState.Phase.Completed()
	})
	if st := app.Status.OperationState; st.Phase != v1alpha1.OperationFailed || st.Message != "Operation terminated" {
		t.Errorf("terminated sync: %s %q", st.Phase, st.Message)
	}
}

// stream opens the application event stream and delivers its messages.
func (f *fixture) stream(t *testing.T, path, token string) <-chan applicationEvent {
	return streamOf[applicationEvent](t, f, path, token)
}

// streamOf opens a Server-Sent Events stream and delivers the result of
// each message.
func streamOf[T any](t *testing.T, f *fixture, path, token string) <-chan T {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", f.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: f.client.Transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan T, 100)
	go eachResult(resp.Body, func(result T) {
		select {
		case out <- result:
		default:
		}
	})
	return out
}

// eachResult reads a Server-Sent Events stream until it ends and hands
// on the result of each message that decodes as a T.
func eachResult[T any](body io.ReadCloser, each func(T)) {
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg struct{ Result T }
		if json.Unmarshal([]byte(data), &msg) == nil {
			each(msg.Result)
		}
	}
}

func waitFor(t *testing.T, events <-chan applicationEvent, what string, ok func(applicationEvent) bool) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Application != nil && ok(e) {
				return
			}
		case <-timeout:
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// pollCall repeats a GET until ok accepts the decoded answer.
func (f *fixture) pollCall(t *testing.T, method, path, token string, out any, ok func() bool) {
	t.Helper()
	eventually.String(t, method+" "+path, func() string {
		if code := f.call(method, path, "", token, out); code == 200 && ok() {
			return ""
		}
		return fmt.Sprintf("the last answer %+v", out)
	})
}
