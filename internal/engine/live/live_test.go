package live

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &cluster))
}

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func waitFor(t *testing.T, changes <-chan string, app string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-changes:
			if got == app {
				return
			}
		case <-timeout:
			t.Fatalf("no change reported for %s", app)
		}
	}
}

func TestTrackedObjectsAreIndexedAndReported(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	changes := make(chan string, 100)
	c, err := New(cluster.Config, Options{OnChange: func(app string) { changes <- app }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	ctx := context.Background()
	if err := c.Watch(ctx, configMapGVK); err != nil {
		t.Fatal(err)
	}

	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns, Annotations: map[string]string{
		v1alpha1.AnnotationTrackingID:                      "guestbook:/ConfigMap:" + ns + "/settings",
		"kubectl.kubernetes.io/last-applied-configuration": `{"big":"blob"}`,
	}}, Data: map[string]string{"a": "1"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A copy of the annotation on another object does not make it managed.
	copied := cm.DeepCopy()
	copied.Name = "copy"
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, copied, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, changes, "guestbook")

	managed := c.ManagedBy("guestbook")
	if len(managed) != 1 || managed[0].GetName() != "settings" {
		t.Fatalf("managed = %v", managed)
	}
	if managed[0].GetManagedFields() != nil {
		t.Error("managedFields kept in the cache")
	}
	if _, ok := managed[0].GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		t.Error("last-applied annotation kept in the cache")
	}
	// The copy's own watch event may come after the notification above.
	eventually.Within(t, eventually.Options{Interval: 20 * time.Millisecond}, "Get(copy) finding the unmanaged copy", func() string {
		got, found, err := c.Get(configMapGVK, ns, "copy")
		if err != nil {
			t.Fatal(err)
		}
		if !found || got.GetName() != "copy" {
			return fmt.Sprintf("found %v", found)
		}
		return ""
	})

	cm.Data["a"] = "2"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, changes, "guestbook")
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, changes, "guestbook")
	if n := len(c.ManagedBy("guestbook")); n != 0 {
		t.Errorf("%d objects still managed after deletion", n)
	}
}

func TestKindsInstalledLaterAndUnknownKinds(t *testing.T) {
	localcluster.Need(t)
	c, err := New(cluster.Config, Options{Tracking: tracking.Label})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	ctx := context.Background()
	if err := c.Watch(ctx, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nothing"}); err == nil {
		t.Error("watching an unknown kind succeeded")
	}
	// The Application CRD appears after the cache's discovery was read.
	if err := kube.InstallCRDs(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(ctx, v1alpha1.ApplicationGVK); err != nil {
		t.Fatalf("watching a CRD installed later: %v", err)
	}
	ns := cluster.NewNamespace(t)
	kc, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(v1alpha1.ApplicationGVK)
	app.SetNamespace(ns)
	app.SetName("child")
	app.SetLabels(map[string]string{v1alpha1.LabelAppInstance: "parent"})
	_ = unstructured.SetNestedField(app.Object, map[string]any{"project": "default", "destination": map[string]any{"server": "https://kubernetes.default.svc"}}, "spec")
	if err := kc.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	eventually.Within(t, eventually.Options{Interval: 50 * time.Millisecond}, "the label-tracked Application indexed", func() string {
		if len(c.ManagedBy("parent")) == 0 {
			return "nothing managed by parent"
		}
		return ""
	})
	if len(c.ManagedBy("parent")) != 1 {
		t.Error("label-tracked Application not indexed")
	}
}

// exampleConfig reaches the tests' cluster, for the examples.
func exampleConfig() *rest.Config { return rest.CopyConfig(cluster.Config) }
