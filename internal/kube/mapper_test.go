package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestMemoizeAsksOncePerKind(t *testing.T) {
	gv := schema.GroupVersion{Group: "argoproj.io", Version: "v1alpha1"}
	inner := &countingMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})}
	inner.Add(gv.WithKind("Application"), meta.RESTScopeNamespace)
	m := Memoize(inner)
	for range 3 {
		mapping, err := m.RESTMapping(schema.GroupKind{Group: "argoproj.io", Kind: "Application"}, "v1alpha1")
		if err != nil || mapping.Resource.Resource != "applications" {
			t.Fatalf("mapping %+v, %v", mapping, err)
		}
		if _, err := m.RESTMapping(schema.GroupKind{Group: "argoproj.io", Kind: "Missing"}); !meta.IsNoMatchError(err) {
			t.Fatalf("an unknown kind: %v, want no match", err)
		}
	}
	if inner.asked != 4 {
		t.Errorf("the mapper was asked %d times, want once for the known kind and each time for the unknown one (4)", inner.asked)
	}
}

type countingMapper struct {
	*meta.DefaultRESTMapper
	asked int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.DefaultRESTMapper.RESTMapping(gk, versions...)
}
