package cluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/argoproj/argo-cd/v3/controller/sharding/consistent"
)

// Sharding is how destination clusters are spread over the controller's
// replicas, by Argo CD's names of its algorithms
// (controller.sharding.algorithm). Whatever the algorithm, a cluster
// whose Secret names a shard goes there (to replica 0 when there is no
// such replica), as in Argo CD.
type Sharding string

const (
	// ShardingLegacy hashes each cluster Secret's UID (FNV-32a) modulo
	// the replicas: stable, not always even. The default.
	ShardingLegacy Sharding = "legacy"
	// ShardingRoundRobin deals the clusters, sorted by UID, to the
	// replicas in turn: even, but adding a cluster may move others.
	ShardingRoundRobin Sharding = "round-robin"
	// ShardingConsistentHashing places the clusters, sorted by UID, on a
	// consistent hash ring with bounded loads, weighing each by its
	// Applications: nearly even, and few move when the replicas change.
	ShardingConsistentHashing Sharding = "consistent-hashing"
)

// ParseSharding reads an algorithm's name; "" is legacy.
func ParseSharding(name string) (Sharding, error) {
	switch s := Sharding(name); s {
	case "":
		return ShardingLegacy, nil
	case ShardingLegacy, ShardingRoundRobin, ShardingConsistentHashing:
		return s, nil
	}
	return "", fmt.Errorf("sharding algorithm %q: use %s, %s or %s", name, ShardingLegacy, ShardingRoundRobin, ShardingConsistentHashing)
}

// NeedsAll reports whether a cluster's shard depends on the other
// clusters (and their Applications), not on the cluster alone.
func (s Sharding) NeedsAll() bool { return s == ShardingRoundRobin || s == ShardingConsistentHashing }

// Assign gives each of clusters (every registered one, in-cluster
// included) its replica, of replicas, by server URL. appsByServer counts
// the Applications of each destination server, which consistent hashing
// weighs clusters by.
func (s Sharding) Assign(clusters []*Cluster, replicas int, appsByServer map[string]int64) map[string]int {
	out := make(map[string]int, len(clusters))
	if s == ShardingLegacy || replicas <= 1 {
		for _, c := range clusters {
			out[c.Server] = c.ShardOf(replicas)
		}
		return out
	}
	sorted := slices.Clone(clusters)
	slices.SortStableFunc(sorted, func(a, b *Cluster) int { return strings.Compare(a.ID, b.ID) })
	var ring *consistent.Consistent
	loads := map[string]int64{}
	if s == ShardingConsistentHashing {
		ring = consistent.New()
		for i := range replicas {
			ring.Add(strconv.Itoa(i))
		}
	}
	for rank, c := range sorted {
		// Every cluster, a pinned one too, takes its place in the order
		// and its load on the ring, as in Argo CD; a pin then wins.
		if ring == nil {
			out[c.Server] = rank % replicas
		} else {
			out[c.Server] = placeOnRing(ring, loads, c, appsByServer[c.Server])
		}
		if c.Shard != nil {
			out[c.Server] = c.ShardOf(replicas)
		}
	}
	return out
}

// placeOnRing takes the least loaded replica near the cluster's UID on
// the ring and adds its Applications to that replica's load.
func placeOnRing(ring *consistent.Consistent, loads map[string]int64, c *Cluster, apps int64) int {
	host, err := ring.GetLeast(c.ID)
	if err != nil {
		return 0 // no replica on the ring: replicas > 1 puts them there
	}
	loads[host] += apps
	ring.UpdateLoad(host, loads[host])
	n, _ := strconv.Atoi(host) // the ring holds the replicas' numbers only
	return n
}
