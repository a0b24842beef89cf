package kube

import (
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// DiscoveryMapper is a Mapper over a cluster's discovery API, cached in
// memory and refreshed once when a kind is unknown (a CRD installed a
// moment ago).
type DiscoveryMapper struct {
	mapper meta.ResettableRESTMapper
	found  sync.Map // schema.GroupVersionKind -> *meta.RESTMapping, until a reset
}

// NewDiscoveryMapper returns a DiscoveryMapper asking disc.
func NewDiscoveryMapper(disc discovery.DiscoveryInterface) *DiscoveryMapper {
	return &DiscoveryMapper{mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

// Mapping implements Mapper.
func (d *DiscoveryMapper) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if found, ok := d.found.Load(gvk); ok {
		return found.(*meta.RESTMapping), nil
	}
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		d.mapper.Reset()
		d.found.Clear()
		m, err = d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", gvk, err)
	}
	d.found.Store(gvk, m)
	return m, nil
}

// memoMapper remembers the mappings a RESTMapper found: controller-runtime
// asks for one on every read of its cache (is the kind namespaced?), and
// the discovery mappers answer by walking every group each time.
type memoMapper struct {
	meta.RESTMapper
	found sync.Map // schema.GroupVersionKind -> *meta.RESTMapping
}

// Memoize returns m answering RESTMapping for one version (or none) from
// memory once it has answered it. A kind's mapping does not change while
// it is served; a kind not found is asked again each time.
func Memoize(m meta.RESTMapper) meta.RESTMapper { return &memoMapper{RESTMapper: m} }

func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) > 1 {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	key := gk.WithVersion("")
	if len(versions) == 1 {
		key.Version = versions[0]
	}
	if found, ok := m.found.Load(key); ok {
		return found.(*meta.RESTMapping), nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err == nil {
		m.found.Store(key, mapping)
	}
	return mapping, err
}

// NewManagerMapper is controller-runtime's dynamic RESTMapper, memoized:
// a ctrl.Options MapperProvider.
func NewManagerMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, err
	}
	return Memoize(m), nil
}
