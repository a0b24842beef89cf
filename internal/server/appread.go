package server

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// parseSelector parses a label selector query parameter; empty selects
// everything.
func parseSelector(sel string) (labels.Selector, error) {
	if sel == "" {
		return labels.Everything(), nil
	}
	parsed, err := labels.Parse(sel)
	if err != nil {
		return nil, fmt.Errorf("invalid selector %q: %v", sel, err)
	}
	return parsed, nil
}

// readApps returns the Applications of namespace ns that selector
// matches, shared with the cache: callers never change them. The second
// value is the resource version the answer shows the state at: the list's
// own, or, read from an informer cache, the newest of its items (a cache
// holding an object's version has seen every change before it), from
// which a stream resumes.
//
// The server's own namespace is read from an index of its informer's
// Applications, without copying thousands of them into a list on every
// request.
func (s *Server) readApps(ctx context.Context, ns string, selector labels.Selector) ([]*v1alpha1.Application, string, error) {
	if ns == s.opts.Namespace && s.opts.Informers != nil {
		apps, err := s.readAppsFromStore(ctx, ns, selector)
		return apps, newestVersion(apps), err
	}
	var list v1alpha1.ApplicationList
	if err := s.opts.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, "", err
	}
	apps := make([]*v1alpha1.Application, len(list.Items))
	for i := range list.Items {
		apps[i] = &list.Items[i]
	}
	if list.ResourceVersion != "" {
		return apps, list.ResourceVersion, nil
	}
	return apps, newestVersion(apps), nil
}

// readAppsFromStore reads the server's index of its namespace's
// Applications, started on first use.
func (s *Server) readAppsFromStore(ctx context.Context, ns string, selector labels.Selector) ([]*v1alpha1.Application, error) {
	idx, err := s.ownApps.follow(ctx, func() (appInformer, error) {
		return s.opts.Informers.GetInformer(ctx, &v1alpha1.Application{})
	})
	if err != nil {
		return nil, fmt.Errorf("the Applications of namespace %s: %w", ns, err)
	}
	return idx.list(ns, selector), nil
}

// appIndex holds one informer's Applications as pointers, kept by an
// event handler of its own, so that a list of thousands is a slice of
// pointers rather than a copy of every Application.
type appIndex struct {
	once sync.Once
	err  error
	reg  toolscache.ResourceEventHandlerRegistration

	mu   sync.RWMutex
	apps map[string]*v1alpha1.Application // by namespace/name
}

// follow registers the index's handler with the informer get returns, once,
// and waits until the index holds the informer's initial list.
func (x *appIndex) follow(ctx context.Context, get func() (appInformer, error)) (*appIndex, error) {
	x.once.Do(func() {
		x.apps = map[string]*v1alpha1.Application{}
		var inf appInformer
		if inf, x.err = get(); x.err == nil {
			x.reg, x.err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc:    x.put,
				UpdateFunc: func(_, obj any) { x.put(obj) },
				DeleteFunc: x.remove,
			})
		}
	})
	if x.err != nil {
		return nil, x.err
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), x.reg.HasSynced) {
		return nil, ctx.Err()
	}
	return x, nil
}

func (x *appIndex) put(obj any) {
	if app, ok := obj.(*v1alpha1.Application); ok {
		x.mu.Lock()
		x.apps[app.Namespace+"/"+app.Name] = app
		x.mu.Unlock()
	}
}

func (x *appIndex) remove(obj any) {
	if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = gone.Obj
	}
	if app, ok := obj.(*v1alpha1.Application); ok {
		x.mu.Lock()
		delete(x.apps, app.Namespace+"/"+app.Name)
		x.mu.Unlock()
	}
}

// list returns the Applications of namespace ns that selector matches.
func (x *appIndex) list(ns string, selector labels.Selector) []*v1alpha1.Application {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]*v1alpha1.Application, 0, len(x.apps))
	for _, app := range x.apps {
		if app.Namespace == ns && selector.Matches(labels.Set(app.Labels)) {
			out = append(out, app)
		}
	}
	return out
}

// newestVersion is the newest resource version of apps, "" for none.
func newestVersion(apps []*v1alpha1.Application) string {
	var newest uint64
	for _, app := range apps {
		if v, err := strconv.ParseUint(app.ResourceVersion, 10, 64); err == nil {
			newest = max(newest, v)
		}
	}
	if newest == 0 {
		return ""
	}
	return strconv.FormatUint(newest, 10)
}
