package server

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// appEvent is one change to an Application a stream sends.
type appEvent struct {
	typ watch.EventType
	app *v1alpha1.Application
}

// appQueue holds what one stream has yet to send: the latest event of
// each Application, in the order their first unsent change came. So a
// slow client holds at most one event per Application, sees each one's
// latest state, and never holds up the informer nor the other streams.
type appQueue struct {
	mu     sync.Mutex
	order  []string
	latest map[string]appEvent
	// ready has a value when events wait.
	ready chan struct{}
}

func newAppQueue() *appQueue {
	return &appQueue{latest: map[string]appEvent{}, ready: make(chan struct{}, 1)}
}

// push adds ev, replacing the Application's unsent event. An Application
// added and then changed before it was sent is still sent as added.
func (q *appQueue) push(ev appEvent) {
	key := ev.app.Namespace + "/" + ev.app.Name
	q.mu.Lock()
	if prev, ok := q.latest[key]; ok {
		if prev.typ == watch.Added && ev.typ == watch.Modified {
			ev.typ = watch.Added
		}
	} else {
		q.order = append(q.order, key)
	}
	q.latest[key] = ev
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop takes the next event; false when none waits.
func (q *appQueue) pop() (appEvent, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.order) == 0 {
		return appEvent{}, false
	}
	key := q.order[0]
	q.order[0] = ""
	q.order = q.order[1:]
	ev := q.latest[key]
	delete(q.latest, key)
	return ev, true
}

// len is the number of events waiting.
func (q *appQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// handler feeds the queue from an informer: the initial list only when
// initial is set, and only the Applications keep accepts.
func (q *appQueue) handler(initial bool, keep func(*v1alpha1.Application) bool) *queueHandler {
	return &queueHandler{q: q, initial: initial, keep: keep}
}

// queueHandler is an informer's event handler that only queues: it never
// blocks the informer.
type queueHandler struct {
	q       *appQueue
	initial bool
	keep    func(*v1alpha1.Application) bool
}

func (h *queueHandler) OnAdd(obj any, isInInitialList bool) {
	if !isInInitialList || h.initial {
		h.push(watch.Added, obj)
	}
}

func (h *queueHandler) OnUpdate(_, obj any) { h.push(watch.Modified, obj) }

func (h *queueHandler) OnDelete(obj any) {
	if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = gone.Obj
	}
	h.push(watch.Deleted, obj)
}

func (h *queueHandler) push(t watch.EventType, obj any) {
	if app, ok := obj.(*v1alpha1.Application); ok && h.keep(app) {
		h.q.push(appEvent{typ: t, app: app})
	}
}
