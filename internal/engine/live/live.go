// Package live keeps a watch-based cache of one destination cluster's
// objects. Watches start on demand, one per resource kind; objects are
// stored without managedFields and the last-applied annotation, and indexed
// by the Application that tracks them, so a change to a tracked object
// reaches its Application at once.
//
//	c, err := live.New(cfg, live.Options{Tracking: tracking.Annotation, OnChange: queue.Add})
//	err = c.Watch(ctx, deploymentGVK)     // starts and syncs one watch
//	objs := c.ManagedBy("guestbook")       // every watched object the app tracks
package live

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/kube"
)

const byApp = "app"

// syncTimeout bounds the first listing of a newly watched kind.
const syncTimeout = 30 * time.Second

// Options configure a Cache.
type Options struct {
	// Tracking is how objects name their Application. Default annotation.
	Tracking tracking.Method
	// OnChange is called with the Application key of every tracked object
	// that is added, changed or deleted. It must not block.
	OnChange func(app string)
	// IgnoreUpdate, if set, says an update changed nothing that matters
	// (argocd-cm's ignoreResourceUpdates): OnChange is not called for it.
	IgnoreUpdate func(old, new *unstructured.Unstructured) bool
	// Namespaces limits the watches to these namespaces (a cluster Secret's
	// namespaces); empty watches all.
	Namespaces []string
	// Mapper maps kinds to resources. Default: a discovery mapper of its own.
	Mapper *kube.DiscoveryMapper
}

// Cache is the live state of one cluster.
type Cache struct {
	opts    Options
	client  dynamic.Interface
	disc    discovery.DiscoveryInterface
	mapper  *kube.DiscoveryMapper
	factory []dynamicinformer.DynamicSharedInformerFactory // one per namespace, or one for all
	// clusterScoped watches cluster-scoped kinds.
	clusterScoped dynamicinformer.DynamicSharedInformerFactory

	mu       sync.Mutex
	watching map[schema.GroupVersionResource][]cache.SharedIndexInformer
	stop     chan struct{}
}

// New returns a Cache for the cluster cfg reaches. Nothing is watched yet.
func New(cfg *rest.Config, opts Options) (*Cache, error) {
	if opts.Tracking.IsZero() {
		opts.Tracking = tracking.Annotation
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if opts.Mapper == nil {
		opts.Mapper = kube.NewDiscoveryMapper(disc)
	}
	c := &Cache{
		opts:     opts,
		client:   client,
		disc:     disc,
		mapper:   opts.Mapper,
		watching: map[schema.GroupVersionResource][]cache.SharedIndexInformer{},
		stop:     make(chan struct{}),
	}
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		c.factory = append(c.factory, dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, ns, nil))
	}
	c.clusterScoped = c.factory[0]
	if len(opts.Namespaces) > 0 {
		c.clusterScoped = dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, metav1.NamespaceAll, nil)
	}
	return c, nil
}

// Stop ends every watch.
func (c *Cache) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
}

// Mapping returns the resource and scope of a kind, refreshing discovery
// once when the kind is unknown (a CRD installed a moment ago).
func (c *Cache) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return c.mapper.Mapping(gvk)
}

// Watch starts watching the kind, if not already, and waits until its
// objects are listed.
func (c *Cache) Watch(ctx context.Context, gvk schema.GroupVersionKind) error {
	m, err := c.Mapping(gvk)
	if err != nil {
		return err
	}
	c.mu.Lock()
	informers, ok := c.watching[m.Resource]
	if !ok {
		factories := c.factory
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			// Cluster-scoped kinds are watched whole, whatever namespaces
			// the cache is limited to.
			factories = []dynamicinformer.DynamicSharedInformerFactory{c.clusterScoped}
		}
		for _, f := range factories {
			inf := f.ForResource(m.Resource).Informer()
			if err := c.configure(inf); err != nil {
				c.mu.Unlock()
				return err
			}
			informers = append(informers, inf)
			go inf.Run(c.stop)
		}
		c.watching[m.Resource] = informers
	}
	c.mu.Unlock()
	// A kind that cannot be listed (no permission) would never sync.
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for _, inf := range informers {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return fmt.Errorf("listing %s: not done after %s (is it allowed?)", m.Resource.GroupResource(), syncTimeout)
		}
	}
	return nil
}

// configure strips stored objects, indexes them by Application and reports
// changes to tracked ones.
func (c *Cache) configure(inf cache.SharedIndexInformer) error {
	if err := inf.SetTransform(strip); err != nil {
		return err
	}
	if err := inf.AddIndexers(cache.Indexers{byApp: func(o any) ([]string, error) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			if app := tracking.App(c.opts.Tracking, u); app != "" {
				return []string{app}, nil
			}
		}
		return nil, nil
	}}); err != nil {
		return err
	}
	notify := func(objs ...any) {
		if c.opts.OnChange == nil {
			return
		}
		seen := map[string]bool{}
		for _, o := range objs {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if u, ok := o.(*unstructured.Unstructured); ok {
				if app := tracking.App(c.opts.Tracking, u); app != "" && !seen[app] {
					seen[app] = true
					c.opts.OnChange(app)
				}
			}
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { notify(o) },
		UpdateFunc: func(old, o any) {
			if c.ignored(old, o) {
				return
			}
			notify(old, o)
		},
		DeleteFunc: func(o any) { notify(o) },
	})
	return err
}

// ignored reports whether an update is one IgnoreUpdate leaves out.
func (c *Cache) ignored(old, o any) bool {
	if c.opts.IgnoreUpdate == nil {
		return false
	}
	a, okA := old.(*unstructured.Unstructured)
	b, okB := o.(*unstructured.Unstructured)
	return okA && okB && c.opts.IgnoreUpdate(a, b)
}

// strip drops what the cache never needs: managed fields and the
// client-side apply annotation, often the largest parts of an object.
func strip(o any) (any, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return o, nil
	}
	u.SetManagedFields(nil)
	if a := u.GetAnnotations(); a != nil {
		if _, has := a[lastApplied]; has {
			delete(a, lastApplied)
			u.SetAnnotations(a)
		}
	}
	return u, nil
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// ManagedBy returns every watched object that the Application tracks.
func (c *Cache) ManagedBy(app string) []*unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*unstructured.Unstructured
	for _, informers := range c.watching {
		for _, inf := range informers {
			objs, _ := inf.GetIndexer().ByIndex(byApp, app)
			for _, o := range objs {
				out = append(out, o.(*unstructured.Unstructured))
			}
		}
	}
	return out
}

// Get returns a watched object. The kind must be watched.
func (c *Cache) Get(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, bool, error) {
	m, err := c.Mapping(gvk)
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	informers, ok := c.watching[m.Resource]
	c.mu.Unlock()
	if !ok {
		return nil, false, fmt.Errorf("kind %s is not watched", gvk)
	}
	key := name
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		key = namespace + "/" + name
	}
	for _, inf := range informers {
		o, found, err := inf.GetIndexer().GetByKey(key)
		if err != nil {
			return nil, false, err
		}
		if found {
			return o.(*unstructured.Unstructured), true, nil
		}
	}
	return nil, false, nil
}

// Stats returns how many objects and kinds the cache holds, for metrics.
func (c *Cache) Stats() (objects, kinds int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, infs := range c.watching {
		for _, inf := range infs {
			objects += len(inf.GetStore().ListKeys())
		}
	}
	return objects, len(c.watching)
}

// NamespacedKinds returns every namespaced kind the cluster serves that
// can be listed and watched, in its preferred version.
func (c *Cache) NamespacedKinds() ([]schema.GroupVersionKind, error) {
	lists, err := c.disc.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering namespaced kinds: %w", err)
	}
	var out []schema.GroupVersionKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
				continue
			}
			out = append(out, gv.WithKind(r.Kind))
		}
	}
	return out, nil
}

// InNamespace returns every watched object of a namespace.
func (c *Cache) InNamespace(namespace string) []*unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*unstructured.Unstructured
	for _, informers := range c.watching {
		for _, inf := range informers {
			objs, _ := inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
			for _, o := range objs {
				out = append(out, o.(*unstructured.Unstructured))
			}
		}
	}
	return out
}

// Kinds returns the kinds watched, for metrics.
func (c *Cache) Kinds() []schema.GroupVersionResource {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]schema.GroupVersionResource, 0, len(c.watching))
	for r := range c.watching {
		out = append(out, r)
	}
	return out
}
