package controller

import (
	"strconv"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writtenVersions remembers the resourceVersion of the controller's last
// write to each Application, so a reconcile that reads an older copy from
// the informer cache (the write's watch event has not arrived yet) can
// wait for it instead of acting on, and rewriting, a stale status.
type writtenVersions struct {
	m sync.Map // namespace/name -> uint64
}

func (w *writtenVersions) note(obj client.Object) {
	if v, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64); err == nil {
		w.m.Store(obj.GetNamespace()+"/"+obj.GetName(), v)
	}
}

// forget drops what is remembered of a deleted Application.
func (w *writtenVersions) forget(namespace, name string) { w.m.Delete(namespace + "/" + name) }

// stale reports whether obj is older than the last write to it.
func (w *writtenVersions) stale(obj client.Object) bool {
	key := obj.GetNamespace() + "/" + obj.GetName()
	last, ok := w.m.Load(key)
	if !ok {
		return false
	}
	v, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return false
	}
	if v < last.(uint64) {
		return true
	}
	w.m.CompareAndDelete(key, last) // caught up
	return false
}
