package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// SharedCacheOptions say what a SharedCache holds.
type SharedCacheOptions struct {
	// Namespace is the control namespace: every type read is held for it.
	// Required.
	Namespace string
	// AllNamespaces also holds the Applications and ApplicationSets of
	// every namespace (components given --application-namespaces filter
	// them). Default: the control namespace's only.
	AllNamespaces bool
}

// SharedCache is one informer cache of the control cluster read by several
// components of one process (capstan run's controller, API server,
// ApplicationSet and notifications controllers), so each Application is
// decoded and held once rather than once per component.
//
// Its owner starts it with Start; each component gets a view (NewCache
// fits controller-runtime's manager options) whose Start only waits, and
// whose event handlers are removed when that Start's context ends, so a
// component that restarts (a lost leader Lease) leaves nothing behind.
// Objects read through it are shared: callers never change them.
type SharedCache struct {
	cache ctrlcache.Cache
}

// NewSharedCache returns the cache opts describe, not started.
func NewSharedCache(cfg *rest.Config, opts SharedCacheOptions) (*SharedCache, error) {
	if opts.Namespace == "" {
		return nil, fmt.Errorf("a shared cache needs the control namespace")
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	cacheOpts := ctrlcache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]ctrlcache.Config{opts.Namespace: {}},
		// managedFields are never read and can outweigh the object.
		DefaultTransform: ctrlcache.TransformStripManagedFields(),
	}
	if opts.AllNamespaces {
		all := ctrlcache.ByObject{Namespaces: map[string]ctrlcache.Config{ctrlcache.AllNamespaces: {}}}
		cacheOpts.ByObject = map[client.Object]ctrlcache.ByObject{
			&v1alpha1.Application{}:    all,
			&v1alpha1.ApplicationSet{}: all,
		}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("HTTP client for %s: %w", cfg.Host, err)
	}
	if cacheOpts.Mapper, err = NewManagerMapper(cfg, hc); err != nil {
		return nil, err
	}
	cacheOpts.HTTPClient = hc
	c, err := ctrlcache.New(cfg, cacheOpts)
	if err != nil {
		return nil, fmt.Errorf("cache of %s: %w", cfg.Host, err)
	}
	return &SharedCache{cache: c}, nil
}

// Start runs the cache until ctx ends.
func (s *SharedCache) Start(ctx context.Context) error { return s.cache.Start(ctx) }

// View returns a component's view of the cache.
func (s *SharedCache) View() ctrlcache.Cache {
	return &cacheView{Cache: s.cache}
}

// NewCache is View as a controller-runtime NewCacheFunc; the options a
// component would give its own cache are not used (the shared cache
// holds what all of them read).
func (s *SharedCache) NewCache(*rest.Config, ctrlcache.Options) (ctrlcache.Cache, error) {
	return s.View(), nil
}

// cacheView is one component's use of a SharedCache: starting it waits
// for the cache, and its end removes the component's event handlers.
type cacheView struct {
	ctrlcache.Cache

	mu sync.Mutex
	// handlers are the event handlers added through the view and not
	// removed yet, with their informers.
	handlers map[toolscache.ResourceEventHandlerRegistration]ctrlcache.Informer
}

// Start waits until ctx ends, then removes the handlers added through the
// view; the cache itself is its owner's to start and stop.
func (v *cacheView) Start(ctx context.Context) error {
	<-ctx.Done()
	v.mu.Lock()
	defer v.mu.Unlock()
	for reg, inf := range v.handlers {
		_ = inf.RemoveEventHandler(reg)
	}
	clear(v.handlers)
	return nil
}

func (v *cacheView) GetInformer(ctx context.Context, obj client.Object, opts ...ctrlcache.InformerGetOption) (ctrlcache.Informer, error) {
	inf, err := v.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return &sharedInformer{Informer: inf, view: v}, nil
}

func (v *cacheView) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...ctrlcache.InformerGetOption) (ctrlcache.Informer, error) {
	inf, err := v.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	return &sharedInformer{Informer: inf, view: v}, nil
}

func (v *cacheView) remember(inf ctrlcache.Informer, reg toolscache.ResourceEventHandlerRegistration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.handlers == nil {
		v.handlers = map[toolscache.ResourceEventHandlerRegistration]ctrlcache.Informer{}
	}
	v.handlers[reg] = inf
}

func (v *cacheView) forget(reg toolscache.ResourceEventHandlerRegistration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.handlers, reg)
}

// sharedInformer remembers the handlers a view adds to an informer.
type sharedInformer struct {
	ctrlcache.Informer
	view *cacheView
}

func (i *sharedInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandler(h)
	if err == nil {
		i.view.remember(i.Informer, reg)
	}
	return reg, err
}

func (i *sharedInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithResyncPeriod(h, resync)
	if err == nil {
		i.view.remember(i.Informer, reg)
	}
	return reg, err
}

func (i *sharedInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithOptions(h, opts)
	if err == nil {
		i.view.remember(i.Informer, reg)
	}
	return reg, err
}

func (i *sharedInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	i.view.forget(reg)
	return i.Informer.RemoveEventHandler(reg)
}
