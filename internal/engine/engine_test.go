package engine_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var kubeCluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &kubeCluster))
}

func inCluster() *cluster.Cluster {
	return &cluster.Cluster{Name: cluster.InClusterName, Server: cluster.InClusterServer, Config: rest.CopyConfig(kubeCluster.Config)}
}

func configMap(namespace, name string, data map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(namespace)
	u.SetName(name)
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	u.Object["data"] = d
	return u
}

// createLive creates a ConfigMap as a sync would have: tracked by app.
func createLive(t testing.TB, cs kubernetes.Interface, namespace, name, app string, data map[string]string) {
	obj := configMap(namespace, name, data)
	tracking.Set(tracking.Annotation, app, obj)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: obj.GetAnnotations()}, Data: data}
	if _, err := cs.CoreV1().ConfigMaps(namespace).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestWatchedAndDirectCompareAlike compares one app through the watch
// cache (the controller's) and through direct reads (the API server's):
// both see the same drift, the same ignored difference, the same missing
// object and the same object to prune.
func TestWatchedAndDirectCompareAlike(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := kubeCluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(kubeCluster.Config)
	const app = "shop"
	createLive(t, cs, ns, "steady", app, map[string]string{"v": "1"})
	createLive(t, cs, ns, "drifted", app, map[string]string{"v": "edited"})
	createLive(t, cs, ns, "ignored", app, map[string]string{"v": "edited"})
	createLive(t, cs, ns, "removed", app, map[string]string{"v": "1"})
	desired := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			configMap("", "steady", map[string]string{"v": "1"}),
			configMap("", "drifted", map[string]string{"v": "1"}),
			configMap("", "ignored", map[string]string{"v": "1"}),
			configMap("", "missing", map[string]string{"v": "1"}),
		}
	}
	known := []v1alpha1.ResourceStatus{{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "removed"}}
	ignore := []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", Name: "ignored", JSONPointers: []string{"/data/v"}}}

	dests := engine.NewDestinations(engine.DestinationOptions{})
	defer dests.Stop()
	dest, err := dests.Get(inCluster())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]v1alpha1.SyncStatusCode{
		"/ConfigMap/" + ns + "/steady": v1alpha1.SyncStatusCodeSynced, "/ConfigMap/" + ns + "/ignored": v1alpha1.SyncStatusCodeSynced,
		"/ConfigMap/" + ns + "/drifted": v1alpha1.SyncStatusCodeOutOfSync, "/ConfigMap/" + ns + "/missing": v1alpha1.SyncStatusCodeOutOfSync,
		"/ConfigMap/" + ns + "/removed": v1alpha1.SyncStatusCodeOutOfSync,
	}
	for name, live := range map[string]engine.LiveReader{"watched": dest.Watched(), "direct": dest.Direct(tracking.Annotation)} {
		cmp, err := dest.Compare(ctx, engine.CompareRequest{App: app, Namespace: ns, Desired: desired(), Known: known, IgnoreDifferences: ignore, Live: live})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string]v1alpha1.SyncStatusCode{}
		for _, r := range cmp.Resources {
			got[r.Key.String()] = r.Status
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || cmp.Sync != v1alpha1.SyncStatusCodeOutOfSync || len(cmp.Prune) != 1 || cmp.Prune[0].GetName() != "removed" {
			t.Errorf("%s: %v (sync %s, prune %d), want %v", name, got, cmp.Sync, len(cmp.Prune), want)
		}
		if cmp.Health != v1alpha1.HealthStatusMissing {
			t.Errorf("%s: health %s, want Missing", name, cmp.Health)
		}
	}
}

// TestDestinationsMakeNewClientsForNewCredentials: the same credentials
// keep a destination's clients; new ones (cluster rotate-auth) replace
// them and stop the old watches.
func TestDestinationsMakeNewClientsForNewCredentials(t *testing.T) {
	localcluster.Need(t)
	dests := engine.NewDestinations(engine.DestinationOptions{})
	defer dests.Stop()
	c := inCluster()
	first, err := dests.Get(c)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := dests.Get(inCluster()); again != first {
		t.Error("the same credentials made new clients")
	}
	rotated := inCluster()
	rotated.Config.BearerToken = "new-token"
	second, err := dests.Get(rotated)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || len(dests.All()) != 1 {
		t.Errorf("new credentials kept the old clients (%d destinations)", len(dests.All()))
	}
}

func TestDestinationManages(t *testing.T) {
	localcluster.Need(t)
	c := inCluster()
	c.Namespaces = []string{"shop"}
	dest, err := engine.NewDestinations(engine.DestinationOptions{}).Get(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		namespace  string
		namespaced bool
		clusterRes bool
		ok         bool
	}{
		{"shop", true, false, true},
		{"other", true, false, false},
		{"", false, false, false},
		{"", false, true, true},
	} {
		c.ClusterResources = tc.clusterRes
		err := dest.Manages(configMap(tc.namespace, "x", nil), tc.namespaced)
		if (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}

func ExampleDestination_Compare() {
	ctx := context.Background()
	dest, err := engine.NewDestinations(engine.DestinationOptions{}).Get(inCluster())
	if err != nil {
		panic(err)
	}
	var desired unstructured.Unstructured
	_ = yaml.Unmarshal([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: example-settings}\ndata: {v: one}\n"), &desired.Object)
	cmp, err := dest.Compare(ctx, engine.CompareRequest{
		App: "example", Namespace: "default", Desired: []*unstructured.Unstructured{&desired}, Live: dest.Direct(tracking.Annotation),
	})
	if err != nil {
		panic(err)
	}
	for _, r := range cmp.Resources {
		fmt.Println(r.Key, r.Status, r.Health.Status)
	}
	fmt.Println(cmp.Sync, cmp.Health)
	// Output:
	// /ConfigMap/default/example-settings OutOfSync Missing
	// OutOfSync Missing
}

func ExampleObjectKey() {
	key := engine.KeyOf(configMap("shop", "settings", nil))
	fmt.Println(key)
	fmt.Println(key.Ref())
	// Output:
	// /ConfigMap/shop/settings
	// ConfigMap/shop/settings
}
