package kube

import (
	"cmp"
	"context"
	"iter"
	"slices"
	"strconv"
	"strings"
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
	// order is every key in name order, rebuilt after an object is added
	// or removed (an update moves nothing); nil until asked for.
	order  []NameKey
	newest uint64 // the newest resourceVersion seen
}

// NameKey is an object's place in name order: by name, then namespace.
type NameKey struct{ Name, Namespace string }

// Compare orders keys by name, then namespace.
func (k NameKey) Compare(o NameKey) int {
	return cmp.Or(strings.Compare(k.Name, o.Name), strings.Compare(k.Namespace, o.Namespace))
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
		key := o.GetNamespace() + "/" + o.GetName()
		x.mu.Lock()
		if _, known := x.objs[key]; !known {
			x.order = nil
		}
		x.objs[key] = o
		if v, err := strconv.ParseUint(o.GetResourceVersion(), 10, 64); err == nil {
			x.newest = max(x.newest, v)
		}
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
		x.order = nil
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

// Newest is the newest resourceVersion the index has seen, "" before any:
// a version its objects are as new as, to watch from.
func (x *Index[T]) Newest() string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.newest == 0 {
		return ""
	}
	return strconv.FormatUint(x.newest, 10)
}

// InNameOrder yields the objects keep accepts (all, when keep is nil) by
// name, then namespace, from the first after the key after (from the
// first, when nil). It costs the objects it yields and skips, not a sort
// of them all: the order is kept between calls.
func (x *Index[T]) InNameOrder(after *NameKey, keep func(T) bool) iter.Seq[T] {
	order := x.nameOrder()
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(order, *after, NameKey.Compare)
		if start < len(order) && order[start] == *after {
			start++
		}
	}
	return func(yield func(T) bool) {
		for _, k := range order[start:] {
			x.mu.RLock()
			o, ok := x.objs[k.Namespace+"/"+k.Name]
			x.mu.RUnlock()
			if ok && (keep == nil || keep(o)) && !yield(o) {
				return
			}
		}
	}
}

// nameOrder returns the keys in name order, sorting them again only after
// an object came or went. The slice returned is never changed.
func (x *Index[T]) nameOrder() []NameKey {
	x.mu.RLock()
	order := x.order
	x.mu.RUnlock()
	if order != nil {
		return order
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.order == nil {
		x.order = make([]NameKey, 0, len(x.objs))
		for _, o := range x.objs {
			x.order = append(x.order, NameKey{Name: o.GetName(), Namespace: o.GetNamespace()})
		}
		slices.SortFunc(x.order, NameKey.Compare)
	}
	return x.order
}
