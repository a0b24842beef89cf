package server

import (
	"context"
	"fmt"
	"iter"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
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

// appsInOrder yields the Applications of namespace ns that selector
// matches, by name then namespace, from after the key after (the first
// when nil), and the list's resource version. The server's own namespace
// comes from its index in that order; another is listed and sorted.
func (s *Server) appsInOrder(ctx context.Context, ns string, selector labels.Selector, after *kube.NameKey) (iter.Seq[*v1alpha1.Application], string, error) {
	if ns == s.opts.Namespace && s.opts.Informers != nil {
		if err := s.followOwnApps(ctx, ns); err != nil {
			return nil, "", err
		}
		return s.ownApps.InNameOrder(after, func(app *v1alpha1.Application) bool {
			return app.Namespace == ns && selector.Matches(labels.Set(app.Labels))
		}), s.ownApps.Newest(), nil
	}
	apps, version, err := s.readApps(ctx, ns, selector)
	if err != nil {
		return nil, "", err
	}
	return inOrder(apps, after), version, nil
}

// followOwnApps starts the server's index of its namespace's
// Applications, on first use.
func (s *Server) followOwnApps(ctx context.Context, ns string) error {
	err := s.ownApps.Follow(ctx, func() (kube.HandlerAdder, error) {
		return s.opts.Informers.GetInformer(ctx, &v1alpha1.Application{})
	})
	if err != nil {
		return fmt.Errorf("the Applications of namespace %s: %w", ns, err)
	}
	return nil
}

// readAppsFromStore reads the server's index of its namespace's
// Applications, started on first use.
func (s *Server) readAppsFromStore(ctx context.Context, ns string, selector labels.Selector) ([]*v1alpha1.Application, error) {
	if err := s.followOwnApps(ctx, ns); err != nil {
		return nil, err
	}
	return s.ownApps.List(func(app *v1alpha1.Application) bool {
		return app.Namespace == ns && selector.Matches(labels.Set(app.Labels))
	}), nil
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
