package cluster

import (
	"fmt"
	"slices"
	"testing"
)

func TestParseSharding(t *testing.T) {
	for name, want := range map[string]Sharding{"": ShardingLegacy, "legacy": ShardingLegacy, "round-robin": ShardingRoundRobin,
		"consistent-hashing": ShardingConsistentHashing} {
		if got, err := ParseSharding(name); err != nil || got != want {
			t.Errorf("%q: %v, %v", name, got, err)
		}
	}
	if _, err := ParseSharding("random"); err == nil {
		t.Error("an algorithm Argo CD does not have was accepted")
	}
}

// clustersOf makes n clusters with UIDs uid-00..., in-cluster (no UID)
// first.
func clustersOf(n int) []*Cluster {
	out := []*Cluster{{Name: InClusterName, Server: InClusterServer}}
	for i := range n {
		out = append(out, &Cluster{ID: fmt.Sprintf("uid-%02d", i), Server: fmt.Sprintf("https://c%02d.example.com", i)})
	}
	return out
}

// TestRoundRobin deals the clusters, by UID, to the replicas in turn:
// in-cluster (no UID) first, a pinned cluster keeping its place in the
// order, as Argo CD's round-robin does.
func TestRoundRobin(t *testing.T) {
	clusters := clustersOf(7)
	two := int64(2)
	clusters[3].Shard = &two // uid-02, rank 3, would be shard 0
	slices.Reverse(clusters) // the order they come in does not matter
	got := ShardingRoundRobin.Assign(clusters, 3, nil)
	want := map[string]int{InClusterServer: 0, "https://c00.example.com": 1, "https://c01.example.com": 2, "https://c02.example.com": 2,
		"https://c03.example.com": 1, "https://c04.example.com": 2, "https://c05.example.com": 0, "https://c06.example.com": 1}
	for server, shard := range want {
		if got[server] != shard {
			t.Errorf("%s: shard %d, want %d (all: %v)", server, got[server], shard, got)
		}
	}
}

// TestConsistentHashing: clusters weighed by their Applications spread
// over the replicas with bounded loads, the same way every time, and
// growing the replicas moves few of them.
func TestConsistentHashing(t *testing.T) {
	clusters := clustersOf(60)
	apps := map[string]int64{}
	for i, c := range clusters {
		apps[c.Server] = int64(1 + i%5)
	}
	three := ShardingConsistentHashing.Assign(clusters, 3, apps)
	if again := ShardingConsistentHashing.Assign(slices.Clone(clusters), 3, apps); fmt.Sprint(again) != fmt.Sprint(three) {
		t.Fatal("two assignments of the same clusters differ")
	}
	load := map[int]int64{}
	var total int64
	for _, c := range clusters {
		s := three[c.Server]
		if s < 0 || s > 2 {
			t.Fatalf("%s: shard %d", c.Server, s)
		}
		load[s] += apps[c.Server]
		total += apps[c.Server]
	}
	for s := range 3 {
		// Bounded loads: no replica over 1.25 times its share (and one
		// cluster's worth of rounding).
		if limit := total*125/300 + 5; load[s] == 0 || load[s] > limit {
			t.Errorf("replica %d carries %d of %d Applications (limit %d): %v", s, load[s], total, limit, load)
		}
	}
	four := ShardingConsistentHashing.Assign(clusters, 4, apps)
	moved := 0
	for _, c := range clusters {
		if four[c.Server] != three[c.Server] {
			moved++
		}
	}
	if moved > len(clusters)*2/3 {
		t.Errorf("a fourth replica moved %d of %d clusters", moved, len(clusters))
	}
	t.Logf("loads %v; a fourth replica moved %d of %d clusters", load, moved, len(clusters))
}

func ExampleSharding_Assign() {
	clusters := []*Cluster{{Name: InClusterName, Server: InClusterServer},
		{ID: "b", Server: "https://b.example.com"}, {ID: "a", Server: "https://a.example.com"}}
	shards := ShardingRoundRobin.Assign(clusters, 2, nil)
	fmt.Println(shards[InClusterServer], shards["https://a.example.com"], shards["https://b.example.com"])
	// Output: 0 1 0
}
