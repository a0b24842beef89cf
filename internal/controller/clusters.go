package controller

import (
	"context"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
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

// clusterCounts reports each watched destination, for metrics: its live
// cache, its version, and its name and labels as its Secret has them now.
type clusterCounts struct {
	dests    *engine.Destinations
	clusters *cluster.Registry
}

// ClusterObjectCounts implements metrics.ClusterStats.
func (c *clusterCounts) ClusterObjectCounts() []metrics.ClusterCount {
	current := map[string]*cluster.Cluster{}
	if list, err := c.clusters.List(context.Background()); err == nil {
		for _, cl := range list {
			current[cl.Server] = cl
		}
	}
	var out []metrics.ClusterCount
	for _, dst := range c.dests.All() {
		cache, ok := dst.Watching()
		if !ok {
			continue
		}
		cl := dst.Cluster
		if now, ok := current[cl.Server]; ok {
			cl = now
		}
		objects, kinds := cache.Stats()
		v := dst.Version()
		out = append(out, metrics.ClusterCount{Server: cl.Server, Name: cl.Name, Labels: cl.Labels, Objects: objects, APIs: kinds, SyncedAt: dst.Created,
			Version: v.Version, Connected: v.Connected, VersionKnown: !v.At.IsZero()})
	}
	return out
}
