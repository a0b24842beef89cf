package controller

import (
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/metrics"
)

// appEvents turns a change to a tracked object into a reconcile of its
// Application, without blocking the watch.
type appEvents struct {
	controlNamespace string
	events           chan<- event.GenericEvent
}

func (e appEvents) notify(appKey string) {
	ns, name := e.controlNamespace, appKey
	if i := strings.Index(appKey, "_"); i >= 0 {
		ns, name = appKey[:i], appKey[i+1:]
	}
	app := &v1alpha1.Application{}
	app.Namespace, app.Name = ns, name
	select {
	case e.events <- event.GenericEvent{Object: app}:
	default: // the queue is full of work already; the periodic refresh catches up
	}
}

// clusterCounts reports each destination's live cache, for metrics.
type clusterCounts struct{ dests *engine.Destinations }

// ClusterObjectCounts implements metrics.ClusterSource.
func (c *clusterCounts) ClusterObjectCounts() []metrics.ClusterCount {
	var out []metrics.ClusterCount
	for _, dst := range c.dests.All() {
		cache, ok := dst.Watching()
		if !ok {
			continue
		}
		objects, kinds := cache.Stats()
		out = append(out, metrics.ClusterCount{Server: dst.Cluster.Server, Objects: objects, APIs: kinds, SyncedAt: dst.Created})
	}
	return out
}
