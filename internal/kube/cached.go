package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// NewCachedClient returns a client that reads objects of the namespace
// from an informer cache, started here and stopped when ctx ends, and
// everything else, and every write, from the API server. It is for
// components that read the same few objects on every request (the API
// server's Applications, projects, settings and Secrets): a read costs no
// request to the Kubernetes API, and keeps working while it is away.
//
// An Application or AppProject the cache does not hold yet (created a
// moment ago) is read from the API server, so a caller reads what it just
// wrote; an absent ConfigMap or Secret (an optional setting) is absent.
//
// The informers behind it are returned too, for callers that follow
// changes (the API server's streams) rather than start watches of their
// own.
func NewCachedClient(ctx context.Context, cfg *rest.Config, namespace string) (client.Client, ctrlcache.Informers, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, nil, err
	}
	c, err := ctrlcache.New(cfg, ctrlcache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]ctrlcache.Config{namespace: {}},
		// managedFields are never read and can outweigh the object.
		DefaultTransform: ctrlcache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, nil, err
	}
	go func() { _ = c.Start(ctx) }()
	return CachedClient(ctx, cfg, namespace, c)
}

// CachedClient is NewCachedClient reading from c, a cache started by its
// owner (a SharedCache's view) that holds namespace.
func CachedClient(ctx context.Context, cfg *rest.Config, namespace string, c ctrlcache.Cache) (client.Client, ctrlcache.Informers, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, nil, err
	}
	// The types read on every request are watched from the start, so they
	// are served even if the API server goes away before their first read.
	for _, obj := range []client.Object{&v1alpha1.Application{}, &v1alpha1.AppProject{}, &corev1.ConfigMap{}, &corev1.Secret{}} {
		if _, err := c.GetInformer(ctx, obj, ctrlcache.BlockUntilSynced(false)); err != nil {
			return nil, nil, err
		}
	}
	if !c.WaitForCacheSync(ctx) {
		return nil, nil, fmt.Errorf("reading namespace %s from %s: %w", namespace, cfg.Host, ctx.Err())
	}
	direct, err := NewClient(cfg)
	if err != nil {
		return nil, nil, err
	}
	reader := &namespaceCached{namespace: namespace, cache: c, direct: direct}
	out, err := client.New(cfg, client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: reader, Unstructured: false}})
	if err != nil {
		return nil, nil, fmt.Errorf("creating client for %s: %w", cfg.Host, err)
	}
	return out, c, nil
}

// namespaceCached reads one namespace from the cache, falling back to the
// API server for objects it does not hold, and other namespaces directly.
type namespaceCached struct {
	namespace string
	cache     client.Reader
	direct    client.Reader
}

func (r *namespaceCached) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key.Namespace != r.namespace {
		return r.direct.Get(ctx, key, obj, opts...)
	}
	err := r.cache.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) && readYourWrites(obj) {
		return r.direct.Get(ctx, key, obj, opts...)
	}
	return err
}

func (r *namespaceCached) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.Namespace != r.namespace {
		return r.direct.List(ctx, list, opts...)
	}
	return r.cache.List(ctx, list, opts...)
}

// readYourWrites reports whether a missing object of obj's type is looked
// for on the API server too: the types API callers create and then read.
func readYourWrites(obj client.Object) bool {
	switch obj.(type) {
	case *v1alpha1.Application, *v1alpha1.AppProject:
		return true
	}
	return false
}
