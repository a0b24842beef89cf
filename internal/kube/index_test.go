package kube

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestIndexFollowsTheInformer: an Index holds what its informer holds,
// as the informer's own pointers, through adds and deletes.
func TestIndexFollowsTheInformer(t *testing.T) {
	localcluster.Need(t)
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
	eventually.True(t, "the index drops a and holds c", func() bool { got := names(); return !got["a"] && got["b"] && got["c"] })
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

// TestIndexInNameOrder: objects come by name then namespace, from after
// a key, the order following adds and removals.
func TestIndexInNameOrder(t *testing.T) {
	idx := Index[*corev1.ConfigMap]{objs: map[string]*corev1.ConfigMap{}}
	cm := func(ns, name, version string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: version}}
	}
	for _, o := range []*corev1.ConfigMap{cm("y", "b", "7"), cm("x", "b", "3"), cm("x", "a", "12"), cm("x", "c", "5")} {
		idx.put(o)
	}
	keys := func(after *NameKey, keep func(*corev1.ConfigMap) bool) string {
		var out []string
		for o := range idx.InNameOrder(after, keep) {
			out = append(out, o.Namespace+"/"+o.Name)
		}
		return strings.Join(out, " ")
	}
	if got := keys(nil, nil); got != "x/a x/b y/b x/c" {
		t.Errorf("in name order: %s", got)
	}
	if got := keys(&NameKey{Name: "b", Namespace: "x"}, nil); got != "y/b x/c" {
		t.Errorf("after x/b: %s", got)
	}
	if got := keys(&NameKey{Name: "bb"}, nil); got != "x/c" {
		t.Errorf("after a name that is not there: %s", got)
	}
	if got := keys(nil, func(o *corev1.ConfigMap) bool { return o.Namespace == "y" }); got != "y/b" {
		t.Errorf("kept: %s", got)
	}
	idx.remove(cm("x", "b", ""))
	idx.put(cm("x", "aa", "4"))
	if got := keys(nil, nil); got != "x/a x/aa y/b x/c" {
		t.Errorf("after a removal and an addition: %s", got)
	}
	if got := idx.Newest(); got != "12" {
		t.Errorf("newest version %s, want 12", got)
	}
}
