package server

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// appInformer is what a stream needs of an informer of Applications: a
// handler of its own, which the informer first gives every Application
// it holds (flagged as its initial list), then each change.
type appInformer interface {
	AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
	RemoveEventHandler(toolscache.ResourceEventHandlerRegistration) error
}

// appFeeds are the informers the application streams of a namespace
// share: one list and one watch of the API server for every stream of
// the namespace, each change decoded once, instead of a list and a watch
// per stream. An informer is started by the first stream of its
// namespace and stopped after the last.
type appFeeds struct {
	mu    sync.Mutex
	feeds map[string]*appFeed
}

type appFeed struct {
	informer toolscache.SharedIndexInformer
	streams  int
	stop     context.CancelFunc
}

// appInformer returns the informer of namespace ns's Applications and a
// function to call when the caller no longer follows it: the Options'
// informer cache for the server's own namespace, when it has one, or one
// shared with the other streams of ns.
func (s *Server) appInformer(ctx context.Context, ns string) (appInformer, func(), error) {
	if ns == s.opts.Namespace && s.opts.Informers != nil {
		inf, err := s.opts.Informers.GetInformer(ctx, &v1alpha1.Application{})
		if err != nil {
			return nil, nil, fmt.Errorf("the Applications of namespace %s: %w", ns, err)
		}
		return inf, func() {}, nil
	}
	return s.feeds.acquire(ns, func() toolscache.SharedIndexInformer { return s.newAppInformer(ns) })
}

// acquire returns ns's shared informer, started by newInformer when no
// stream follows ns yet, and the function that releases it.
func (f *appFeeds) acquire(ns string, newInformer func() toolscache.SharedIndexInformer) (appInformer, func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.feeds == nil {
		f.feeds = map[string]*appFeed{}
	}
	feed := f.feeds[ns]
	if feed == nil {
		ctx, stop := context.WithCancel(context.Background())
		feed = &appFeed{informer: newInformer(), stop: stop}
		go feed.informer.RunWithContext(ctx)
		f.feeds[ns] = feed
	}
	feed.streams++
	var once sync.Once
	return feed.informer, func() { once.Do(func() { f.release(ns, feed) }) }, nil
}

func (f *appFeeds) release(ns string, feed *appFeed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if feed.streams--; feed.streams == 0 {
		feed.stop()
		delete(f.feeds, ns)
	}
}

// following reports how many informers the streams hold (for tests).
func (f *appFeeds) following() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.feeds)
}

// newAppInformer is an informer of namespace ns's Applications over the
// server's own watching client, without managed fields.
func (s *Server) newAppInformer(ns string) toolscache.SharedIndexInformer {
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &v1alpha1.ApplicationList{}
			return list, s.watcher.List(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &opts})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return s.watcher.Watch(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(ns), &client.ListOptions{Raw: &opts})
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &v1alpha1.Application{}, 0, toolscache.Indexers{})
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		return obj, nil
	})
	return inf
}
