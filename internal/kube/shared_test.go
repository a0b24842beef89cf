package kube

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSharedCacheViews: components reading one shared cache see the same
// objects, and a component that stops (its view's Start returns) leaves no
// event handler behind, while the others keep theirs.
func TestSharedCacheViews(t *testing.T) {
	localcluster.Need(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := "shared-cache"
	direct, shared := startShared(t, ctx, ns)

	// Two components, each with its own view and handler.
	var seen [2]atomic.Int32
	firstCtx, stopFirst := context.WithCancel(ctx)
	stopped := make(chan struct{})
	var first ctrlcache.Cache
	for i := range 2 {
		view := shared.View()
		inf, err := view.GetInformer(ctx, &corev1.ConfigMap{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { seen[i].Add(1) },
			UpdateFunc: func(any, any) { seen[i].Add(1) },
		}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = view
			go func() { _ = view.Start(firstCtx); close(stopped) }()
		} else {
			go func() { _ = view.Start(ctx) }()
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: ns}}
	if err := direct.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "both components see the ConfigMap", func() bool { return seen[0].Load() > 0 && seen[1].Load() > 0 })

	// The first component stops: its handler goes, the second's stays.
	stopFirst()
	<-stopped
	if left := handlersOf(first); left != 0 {
		t.Errorf("the stopped view still holds %d handlers", left)
	}
	// A notification already on its way to the first handler when it was
	// removed may still arrive; so two changes, and the second must reach
	// the second handler only.
	var before int32
	for round, value := range []string{"v1", "v2"} {
		before = seen[0].Load()
		second := seen[1].Load()
		cm.Data = map[string]string{"k": value}
		if err := direct.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		eventually.True(t, "the second component sees the change", func() bool { return seen[1].Load() > second })
		// Had the first handler stayed, it would be told within moments too.
		time.Sleep(200 * time.Millisecond) // room for a call that should not come
		if round == 0 {
			continue
		}
		if got := seen[0].Load(); got != before {
			t.Errorf("the stopped component's handler was called %d more times", got-before)
		}
	}
}

// TestSharedCacheForgetsRemovedHandlers: a handler removed by its
// component (a stream that ends) is not held by the view.
func TestSharedCacheForgetsRemovedHandlers(t *testing.T) {
	localcluster.Need(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shared, err := NewSharedCache(cluster.Config, SharedCacheOptions{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = shared.Start(ctx) }()
	view := shared.View()
	inf, err := view.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{})
		if err != nil {
			t.Fatal(err)
		}
		if err := inf.RemoveEventHandler(reg); err != nil {
			t.Fatal(err)
		}
	}
	if n := handlersOf(view); n != 0 {
		t.Errorf("the view holds %d removed handlers", n)
	}
}

// startShared creates namespace ns and returns a client and a started
// shared cache of it.
func startShared(t *testing.T, ctx context.Context, ns string) (client.Client, *SharedCache) {
	localcluster.Need(t)
	t.Helper()
	direct, err := NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	shared, err := NewSharedCache(cluster.Config, SharedCacheOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = shared.Start(ctx) }()
	return direct, shared
}

// handlersOf is how many event handlers a view holds.
func handlersOf(view ctrlcache.Cache) int {
	v := view.(*cacheView)
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.handlers)
}
