package kube

import (
	"context"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HandlerAdder is what an Index needs of an informer.
type HandlerAdder interface {
	AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
}

// Index holds the objects of one informer as pointers, kept by an event
// handler of its own, so that going over thousands of them costs a slice
// of pointers rather than the copy of every object a cache's List makes.
// The objects are the informer's own: callers never change them.
//
// The zero Index is ready to use; Follow starts it.
type Index[T client.Object] struct {
	once sync.Once
	err  error
	reg  toolscache.ResourceEventHandlerRegistration

	mu   sync.RWMutex
	objs map[string]T // by namespace/name
}

// Follow adds the index's handler to the informer get returns, on the
// first call, and waits until the index holds the informer's initial list
// (or ctx ends).
func (x *Index[T]) Follow(ctx context.Context, get func() (HandlerAdder, error)) error {
	x.once.Do(func() {
		x.mu.Lock()
		x.objs = map[string]T{}
		x.mu.Unlock()
		var inf HandlerAdder
		if inf, x.err = get(); x.err == nil {
			x.reg, x.err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc:    x.put,
				UpdateFunc: func(_, obj any) { x.put(obj) },
				DeleteFunc: x.remove,
			})
		}
	})
	if x.err != nil {
		return x.err
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), x.reg.HasSynced) {
		return ctx.Err()
	}
	return nil
}

func (x *Index[T]) put(obj any) {
	if o, ok := obj.(T); ok {
		x.mu.Lock()
		x.objs[o.GetNamespace()+"/"+o.GetName()] = o
		x.mu.Unlock()
	}
}

func (x *Index[T]) remove(obj any) {
	if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = gone.Obj
	}
	if o, ok := obj.(T); ok {
		x.mu.Lock()
		delete(x.objs, o.GetNamespace()+"/"+o.GetName())
		x.mu.Unlock()
	}
}

// List returns the objects keep accepts (all, when keep is nil), in no
// particular order.
func (x *Index[T]) List(keep func(T) bool) []T {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]T, 0, len(x.objs))
	for _, o := range x.objs {
		if keep == nil || keep(o) {
			out = append(out, o)
		}
	}
	return out
}
