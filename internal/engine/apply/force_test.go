package apply

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// immutableConfigMap is a ConfigMap whose data cannot change in place.
func immutableConfigMap(value, annotations string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frozen\n  annotations: {" + annotations + "}\nimmutable: true\ndata: {v: " + value + "}\n"
}

// TestForce: an object apply cannot change (an immutable field) fails the
// sync, unless the sync is forced (the strategy's force, or Force=true on
// the object), which deletes and recreates it; Replace=true with force
// recreates every time; a forced object whose new version the API server
// refuses is put back as it was; and an invalid object is never deleted.
func TestForce(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	a := newApplier(t, &recorder{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sync := func(manifest string, force bool) *Result {
		t.Helper()
		plan, err := NewPlan(parse(t, manifest))
		if err != nil {
			t.Fatal(err)
		}
		return a.Run(ctx, &Request{App: "frozen", Namespace: ns, Plan: plan, Force: force})
	}
	live := func() (uid, value string) {
		t.Helper()
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "frozen", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(cm.UID), cm.Data["v"]
	}

	if res := sync(immutableConfigMap("one", ""), false); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("first sync: %s", res.Message)
	}
	first, _ := live()
	if res := sync(immutableConfigMap("two", ""), false); res.Phase != v1alpha1.OperationFailed || !strings.Contains(res.Message, "immutable") {
		t.Errorf("unforced change of an immutable field: %s %s", res.Phase, res.Message)
	}
	if res := sync(immutableConfigMap("two", ""), true); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("forced sync: %s", res.Message)
	}
	second, value := live()
	if second == first || value != "two" {
		t.Errorf("forced sync: uid %s (was %s), v=%s", second, first, value)
	}
	if res := sync(immutableConfigMap("three", `argocd.argoproj.io/sync-options: "Force=true"`), false); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("Force=true on the object: %s", res.Message)
	}
	if _, value := live(); value != "three" {
		t.Errorf("Force=true on the object: v=%s", value)
	}
	third, _ := live()
	if res := sync(immutableConfigMap("three", `argocd.argoproj.io/sync-options: "Force=true,Replace=true"`), false); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("Force=true,Replace=true: %s", res.Message)
	}
	if fourth, _ := live(); fourth == third {
		t.Error("Force=true,Replace=true did not recreate an unchanged object")
	}

	// The new version is refused once the old one is gone: the old one
	// comes back.
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\ndata: {v: four, 'not a key!': x}\n"
	if res := sync(bad, true); res.Phase != v1alpha1.OperationFailed || !strings.Contains(res.Message, "put back") {
		t.Errorf("a refused forced object: %s %s", res.Phase, res.Message)
	}
	if _, value := live(); value != "three" {
		t.Errorf("after a refused forced object: v=%s, want the old three", value)
	}

	// Invalid for another reason: left alone, not deleted.
	plain := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {v: one}\n"
	if res := sync(plain, false); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatal(res.Message)
	}
	if res := sync("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {'not a key!': x}\n", true); res.Phase != v1alpha1.OperationFailed {
		t.Errorf("an invalid object: %s", res.Phase)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "plain", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Error("force deleted an object whose new version was merely invalid")
	}
}
