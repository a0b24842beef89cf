package controller

import (
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// shardsTTL is how long an assignment of clusters to replicas is used
// before it is worked out again from the clusters and Applications.
const shardsTTL = 10 * time.Second

// shardCache holds the replica of each destination cluster for the
// sharding algorithms that weigh every cluster (round-robin, consistent
// hashing), worked out at most once per shardsTTL rather than on every
// reconcile.
type shardCache struct {
	mu       sync.Mutex
	at       time.Time
	byServer map[string]int
}

// of returns the replica of the cluster with server's URL; a cluster the
// assignment does not know yet belongs to replica 0.
func (s *shardCache) of(ctx context.Context, r *reconciler, server string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byServer == nil || time.Since(s.at) > shardsTTL {
		if byServer, err := r.assignShards(ctx); err == nil {
			s.byServer, s.at = byServer, time.Now()
		} else {
			r.opts.Log.Warn("cannot spread the clusters over the replicas; keeping the last assignment", "error", err)
		}
	}
	return s.byServer[server]
}

// assignShards spreads every registered cluster over the replicas by
// Options.Sharding, each weighed by its Applications.
func (r *reconciler) assignShards(ctx context.Context) (map[string]int, error) {
	clusters, err := r.clusters.List(ctx)
	if err != nil {
		return nil, err
	}
	var apps v1alpha1.ApplicationList
	if err := r.client.List(ctx, &apps, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	appsByServer := map[string]int64{}
	for i := range apps.Items {
		appsByServer[apps.Items[i].Spec.Destination.Server]++
	}
	return r.opts.Sharding.Assign(clusters, r.opts.Replicas, appsByServer), nil
}
