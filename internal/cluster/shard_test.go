package cluster

import (
	"fmt"
	"testing"
)

func TestShardOf(t *testing.T) {
	one := int64(1)
	tooBig := int64(7)
	if got := (&Cluster{ID: "abc"}).ShardOf(1); got != 0 {
		t.Errorf("one replica: shard %d", got)
	}
	if got := (&Cluster{ID: "abc", Shard: &one}).ShardOf(3); got != 1 {
		t.Errorf("pinned to 1: shard %d", got)
	}
	if got := (&Cluster{}).ShardOf(3); got != 0 {
		t.Errorf("in-cluster: shard %d", got)
	}
	if got := (&Cluster{ID: "abc", Shard: &tooBig}).ShardOf(3); got != 0 {
		t.Errorf("pinned beyond the replicas: shard %d, want 0 as in Argo CD", got)
	}
	// Unpinned clusters spread by UID, the same way on every replica.
	seen := map[int]int{}
	for i := range 300 {
		c := &Cluster{ID: fmt.Sprintf("uid-%d", i)}
		s := c.ShardOf(3)
		if s != c.ShardOf(3) || s < 0 || s > 2 {
			t.Fatalf("shard %d", s)
		}
		seen[s]++
	}
	for s := range 3 {
		if seen[s] < 50 {
			t.Errorf("shard %d got %d of 300 clusters: %v", s, seen[s], seen)
		}
	}
}
