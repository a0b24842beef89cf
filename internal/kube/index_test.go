package kube

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIndexFollowsTheInformer: an Index holds what its informer holds,
// as the informer's own pointers, through adds and deletes.
func TestIndexFollowsTheInformer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := "index-follows"
	direct, shared := startShared(t, ctx, ns)
	for _, name := range []string{"a", "b"} {
		if err := direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	view := shared.View()
	var idx Index[*corev1.ConfigMap]
	follow := func() error {
		return idx.Follow(ctx, func() (HandlerAdder, error) { return view.GetInformer(ctx, &corev1.ConfigMap{}) })
	}
	if err := follow(); err != nil {
		t.Fatal(err)
	}
	names := func() map[string]bool {
		out := map[string]bool{}
		for _, cm := range idx.List(func(cm *corev1.ConfigMap) bool { return cm.Namespace == ns }) {
			out[cm.Name] = true
		}
		return out
	}
	if got := names(); !got["a"] || !got["b"] {
		t.Fatalf("after its initial list the index holds %v, want a and b", got)
	}
	if err := direct.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the index drops a and holds c", func() bool { got := names(); return !got["a"] && got["b"] && got["c"] })
	// Following again adds no second handler.
	if err := follow(); err != nil {
		t.Fatal(err)
	}
	if n := handlersOf(view); n != 1 {
		t.Errorf("%d handlers after following twice, want 1", n)
	}
	// The index hands out the informer's own objects.
	var fromInformer *corev1.ConfigMap
	for _, cm := range idx.List(nil) {
		if cm.Namespace == ns && cm.Name == "b" {
			fromInformer = cm
		}
	}
	if again := idx.List(func(cm *corev1.ConfigMap) bool { return cm == fromInformer }); len(again) != 1 {
		t.Error("two lists gave different objects for one ConfigMap")
	}
}
