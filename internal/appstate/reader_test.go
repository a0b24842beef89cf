package appstate_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var testCluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &testCluster))
}

// fixture is an Application of a real Git repository, a Reader over the
// local cluster, and a client to change the live objects with.
type fixture struct {
	reader *appstate.Reader
	client client.Client
	app    *v1alpha1.Application
	dest   string
}

const (
	secretValue = "hunter2"
	configMap   = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {color: blue}\n"
	secret      = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: " + secretValue + "}\n"
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, testCluster.Config); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	control, dest := testCluster.NewNamespace(t), testCluster.NewNamespace(t)
	if err := settings.EnsureDefaultProject(ctx, c, control); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "guestbook", map[string]string{"app/cm.yaml": configMap, "app/secret.yaml": secret})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: control},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: cluster.InClusterServer, Namespace: dest}},
		Status: v1alpha1.ApplicationStatus{Resources: []v1alpha1.ResourceStatus{
			{Version: "v1", Kind: "ConfigMap", Namespace: dest, Name: "web"},
			{Version: "v1", Kind: "Secret", Namespace: dest, Name: "creds"},
		}},
	}
	r := &appstate.Reader{Client: c, Namespace: control, Renderer: repo.NewService(repo.Options{Root: t.TempDir()}),
		Clusters: &cluster.Registry{Reader: c, Namespace: control, InCluster: testCluster.Config}}
	return &fixture{reader: r, client: c, app: app, dest: dest}
}

// deploy creates the live objects as a sync would leave them: tracked as
// the app's by the annotation.
func (f *fixture) deploy(t *testing.T, color string) {
	t.Helper()
	tracked := func(kind, name string) map[string]string {
		return map[string]string{v1alpha1.AnnotationTrackingID: "guestbook:/" + kind + ":" + f.dest + "/" + name}
	}
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.dest, Annotations: tracked("ConfigMap", "web")}, Data: map[string]string{"color": color}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: f.dest, Annotations: tracked("Secret", "creds")}, StringData: map[string]string{"password": secretValue}},
	} {
		if err := f.client.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
}

func byKind(t *testing.T, diffs []appstate.ResourceDiff) map[string]appstate.ResourceDiff {
	t.Helper()
	out := map[string]appstate.ResourceDiff{}
	for _, d := range diffs {
		out[d.Kind] = d
		for _, state := range []string{d.TargetState, d.LiveState, d.NormalizedLiveState, d.PredictedLiveState} {
			if strings.Contains(state, secretValue) {
				t.Errorf("%s/%s shows the Secret's value: %s", d.Kind, d.Name, state)
			}
		}
	}
	return out
}

// TestManagedResources compares the rendered objects with the live ones:
// absent before a sync, the same after it, modified after a live change;
// a Secret's value is never shown.
func TestManagedResources(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	diffs, err := f.reader.ManagedResources(ctx, f.app)
	if err != nil {
		t.Fatal(err)
	}
	before := byKind(t, diffs)
	if len(before) != 2 || before["ConfigMap"].LiveState != "null" || !before["ConfigMap"].Modified || !strings.Contains(before["ConfigMap"].TargetState, "blue") {
		t.Fatalf("before a sync: %+v", diffs)
	}

	f.deploy(t, "blue")
	diffs, err = f.reader.ManagedResources(ctx, f.app)
	if err != nil {
		t.Fatal(err)
	}
	for kind, d := range byKind(t, diffs) {
		if d.Modified || d.LiveState == "null" || d.ResourceVersion == "" {
			t.Errorf("%s after a sync: modified %v, live %s", kind, d.Modified, d.LiveState)
		}
	}

	cm := &corev1.ConfigMap{}
	if err := f.client.Get(ctx, client.ObjectKey{Namespace: f.dest, Name: "web"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "green"
	if err := f.client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	diffs, err = f.reader.ManagedResources(ctx, f.app)
	if err != nil {
		t.Fatal(err)
	}
	if d := byKind(t, diffs)["ConfigMap"]; !d.Modified || !strings.Contains(d.LiveState, "green") || !strings.Contains(d.PredictedLiveState, "blue") {
		t.Errorf("after a live change: %+v", d)
	}
}

// TestTreeLiveAndEvents: the tree holds the managed objects with their
// health; Live reads an object of the tree, masked, and refuses one
// outside it, so the API cannot read arbitrary objects through an app.
func TestTreeLiveAndEvents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.deploy(t, "blue")
	tree, err := f.reader.Tree(ctx, f.app)
	if err != nil {
		t.Fatal(err)
	}
	node := tree.Find("", "ConfigMap", f.dest, "web")
	if node == nil || node.ResourceVersion == "" || tree.Find("", "Secret", f.dest, "creds") == nil {
		t.Fatalf("tree %+v", tree.Nodes)
	}

	secretRef := appstate.ResourceRef{Version: "v1", Kind: "Secret", Namespace: f.dest, Name: "creds"}
	live, err := f.reader.Live(ctx, f.app, secretRef)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := live.MarshalJSON(); strings.Contains(string(data), secretValue) || strings.Contains(string(data), "aHVudGVyMg") {
		t.Errorf("Live shows the Secret's value: %s", data)
	}

	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-the-apps", Namespace: f.dest}}
	if err := f.client.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	_, err = f.reader.Live(ctx, f.app, appstate.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: f.dest, Name: "not-the-apps"})
	var notFound appstate.NotFoundError
	if !errors.As(err, &notFound) {
		t.Errorf("an object outside the app's tree: %v, want NotFoundError", err)
	}

	event := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.1", Namespace: f.dest}, Reason: "Checked", Message: "looked at", Type: corev1.EventTypeNormal,
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: f.dest, Name: "web", UID: types.UID(node.UID)}}
	if err := f.client.Create(ctx, event); err != nil {
		t.Fatal(err)
	}
	events, err := f.reader.Events(ctx, f.app, appstate.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: f.dest, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) != 1 || events.Items[0].Reason != "Checked" {
		t.Errorf("events %+v", events.Items)
	}
}

// TestProjectBoundsTheComparison: an object the app's project does not
// permit is never read live, and the comparison says why.
func TestProjectBoundsTheComparison(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "no-secrets", Namespace: f.reader.Namespace}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		NamespaceResourceBlacklist: []metav1.GroupKind{{Kind: "Secret"}},
	}}
	if err := f.client.Create(ctx, proj); err != nil {
		t.Fatal(err)
	}
	f.deploy(t, "blue")
	f.app.Spec.Project = "no-secrets"
	diffs, err := f.reader.ManagedResources(ctx, f.app)
	if err != nil {
		t.Fatal(err)
	}
	got := byKind(t, diffs)
	if d, ok := got["Secret"]; ok && d.LiveState != "null" {
		t.Errorf("a Secret the project forbids was read live: %+v", d)
	}
	if got["ConfigMap"].LiveState == "null" {
		t.Errorf("the permitted ConfigMap was not read: %+v", got["ConfigMap"])
	}
}
