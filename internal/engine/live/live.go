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
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
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
	// RespectRBAC, read at each Watch, says what watching a kind the
	// controller may not list does (argocd-cm resource.respectRBAC).
	// Default: RBACIgnored.
	RespectRBAC func() RBACMode
	// EventCounter, if set, is asked once per watched kind for the function
	// called on each of its watch events, added, updated or deleted
	// (argocd_cluster_events_total). Default: events are not counted.
	EventCounter func(gvk schema.GroupVersionKind) func()
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

	authz authorizationv1.SelfSubjectAccessReviewInterface

	mu       sync.Mutex
	watching map[schema.GroupVersionResource]*watch
	// restricted are the kinds left unwatched as the controller may not
	// list them (RBACNormal, RBACStrict), until the cache is made anew.
	restricted map[schema.GroupVersionResource]*RestrictedError
	stop       chan struct{}
}

// watch is one kind's informers: one per namespace, or one for all.
type watch struct {
	informers []cache.SharedIndexInformer
	// stop ends this kind's informers alone.
	stop chan struct{}
	// failed is the latest error of a listing or watch not yet reported.
	failed atomic.Pointer[error]
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
	authz, err := authorizationv1.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cache{
		opts:       opts,
		client:     client,
		disc:       disc,
		mapper:     opts.Mapper,
		authz:      authz.SelfSubjectAccessReviews(),
		watching:   map[schema.GroupVersionResource]*watch{},
		restricted: map[schema.GroupVersionResource]*RestrictedError{},
		stop:       make(chan struct{}),
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
// objects are listed. A kind the controller may not list is an error at
// once; with RespectRBAC it is a *RestrictedError, and the kind is left
// unwatched.
func (c *Cache) Watch(ctx context.Context, gvk schema.GroupVersionKind) error {
	m, err := c.Mapping(gvk)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if r, ok := c.restricted[m.Resource]; ok {
		c.mu.Unlock()
		return r
	}
	w, ok := c.watching[m.Resource]
	if !ok {
		if w, err = c.start(m); err != nil {
			c.mu.Unlock()
			return err
		}
		c.watching[m.Resource] = w
	}
	c.mu.Unlock()
	return c.waitListed(ctx, m, w)
}

// start makes and runs a kind's informers. Called with mu held.
func (c *Cache) start(m *meta.RESTMapping) (*watch, error) {
	factories := c.factory
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		// Cluster-scoped kinds are watched whole, whatever namespaces
		// the cache is limited to.
		factories = []dynamicinformer.DynamicSharedInformerFactory{c.clusterScoped}
	}
	w := &watch{stop: make(chan struct{})}
	for _, f := range factories {
		inf := f.ForResource(m.Resource).Informer()
		if err := c.configure(inf, m.GroupVersionKind); err != nil {
			return nil, err
		}
		if err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			w.failed.Store(&err)
			cache.DefaultWatchErrorHandler(ctx, r, err)
		}); err != nil {
			return nil, err
		}
		w.informers = append(w.informers, inf)
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-c.stop:
		case <-w.stop:
		}
		close(stop)
	}()
	for _, inf := range w.informers {
		go inf.Run(stop)
	}
	return w, nil
}

// waitListed waits until a kind's informers have listed its objects, or
// its listing is refused.
func (c *Cache) waitListed(ctx context.Context, m *meta.RESTMapping, w *watch) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if w.synced() {
			return nil
		}
		if err := w.refused(); err != nil {
			mode := c.mode()
			if mode == RBACIgnored {
				return fmt.Errorf("listing %s: %w", m.Resource.GroupResource(), err)
			}
			allowed := false
			if mode == RBACStrict {
				var reviewErr error
				if allowed, reviewErr = c.mayList(ctx, m); reviewErr != nil {
					return fmt.Errorf("listing %s: %w; asking whether it is allowed: %w", m.Resource.GroupResource(), err, reviewErr)
				}
			}
			if !allowed {
				return c.restrict(m.Resource, w, err)
			}
		}
		if r := c.restrictedErr(m.Resource); r != nil {
			return r // another caller found the kind refused meanwhile
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("listing %s: not done after %s", m.Resource.GroupResource(), syncTimeout)
		case <-tick.C:
		}
	}
}

func (w *watch) synced() bool {
	for _, inf := range w.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// refused takes the latest error of the kind's informers, if the API
// server refused them.
func (w *watch) refused() error {
	p := w.failed.Swap(nil)
	if p == nil || !(apierrors.IsForbidden(*p) || apierrors.IsUnauthorized(*p)) {
		return nil
	}
	return *p
}

func (c *Cache) mode() RBACMode {
	if c.opts.RespectRBAC == nil {
		return RBACIgnored
	}
	return c.opts.RespectRBAC()
}

// restrict stops watching a kind the controller may not list.
func (c *Cache) restrict(r schema.GroupVersionResource, w *watch, err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watching[r] == w {
		delete(c.watching, r)
		close(w.stop)
	}
	re := &RestrictedError{Resource: r.GroupResource(), Err: err}
	c.restricted[r] = re
	return re
}

// restrictedErr is why a kind is left unwatched, nil when it is not.
func (c *Cache) restrictedErr(r schema.GroupVersionResource) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if re, ok := c.restricted[r]; ok {
		return re
	}
	return nil
}

// Restricted reports whether a kind is left unwatched as the controller
// may not list it.
func (c *Cache) Restricted(gvk schema.GroupVersionKind) bool {
	m, err := c.Mapping(gvk)
	if err != nil {
		return false
	}
	return c.restrictedErr(m.Resource) != nil
}

// configure strips stored objects, indexes them by Application and reports
// changes to tracked ones.
func (c *Cache) configure(inf cache.SharedIndexInformer, gvk schema.GroupVersionKind) error {
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
	count := func() {}
	if c.opts.EventCounter != nil {
		count = c.opts.EventCounter(gvk)
	}
	notify := func(objs ...any) {
		count()
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
				count()
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
	for _, w := range c.watching {
		for _, inf := range w.informers {
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
	w, ok := c.watching[m.Resource]
	c.mu.Unlock()
	if !ok {
		return nil, false, fmt.Errorf("kind %s is not watched", gvk)
	}
	informers := w.informers
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
	for _, w := range c.watching {
		for _, inf := range w.informers {
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
	for _, w := range c.watching {
		for _, inf := range w.informers {
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
