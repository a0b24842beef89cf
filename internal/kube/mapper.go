package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// DiscoveryMapper is a Mapper over a cluster's discovery API, cached in
// memory and refreshed once when a kind is unknown (a CRD installed a
// moment ago).
type DiscoveryMapper struct {
	mapper meta.ResettableRESTMapper
}

// NewDiscoveryMapper returns a DiscoveryMapper asking disc.
func NewDiscoveryMapper(disc discovery.DiscoveryInterface) *DiscoveryMapper {
	return &DiscoveryMapper{mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

// Mapping implements Mapper.
func (d *DiscoveryMapper) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		d.mapper.Reset()
		m, err = d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", gvk, err)
	}
	return m, nil
}
