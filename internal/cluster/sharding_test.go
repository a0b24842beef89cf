package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v3/controller/sharding/consistent"
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

// argoConsistentHashing is Argo CD's consistent hashing with bounded
// loads as its controller places clusters, step by step: every cluster,
// sorted by UID and pinned or not, takes the least loaded replica near its
// UID on the ring and adds its Applications to that replica's load; then
// a pinned cluster goes to its shard if that replica exists, else to 0.
func argoConsistentHashing(clusters []*Cluster, replicas int, apps map[string]int64) map[string]int {
	sorted := slices.Clone(clusters)
	slices.SortFunc(sorted, func(a, b *Cluster) int { return strings.Compare(a.ID, b.ID) })
	ring := consistent.New()
	load := map[string]int64{}
	for i := range replicas {
		ring.Add(strconv.Itoa(i))
	}
	out := map[string]int{}
	for _, c := range sorted {
		host, _ := ring.GetLeast(c.ID)
		load[host] += apps[c.Server]
		ring.UpdateLoad(host, load[host])
		out[c.Server], _ = strconv.Atoi(host)
	}
	for _, c := range clusters {
		if c.Shard != nil {
			out[c.Server] = 0
			if int(*c.Shard) < replicas && *c.Shard >= 0 {
				out[c.Server] = int(*c.Shard)
			}
		}
	}
	return out
}

// TestConsistentHashingAsArgoCD: random clusters, some pinned (to a
// replica that exists or not), weighed by random Application counts, are
// placed exactly as Argo CD's controller places them; a pinned cluster's
// Applications still weigh on the ring.
func TestConsistentHashingAsArgoCD(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		clusters := clustersOf(5 + rng.IntN(40))
		apps := map[string]int64{}
		for _, c := range clusters {
			apps[c.Server] = rng.Int64N(30)
			if rng.IntN(5) == 0 {
				shard := rng.Int64N(6)
				c.Shard = &shard
			}
		}
		rng.Shuffle(len(clusters), func(i, j int) { clusters[i], clusters[j] = clusters[j], clusters[i] })
		replicas := 2 + rng.IntN(4)
		got := ShardingConsistentHashing.Assign(clusters, replicas, apps)
		if want := argoConsistentHashing(clusters, replicas, apps); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d, %d replicas:\n got %v\nwant %v", round, replicas, got, want)
		}
	}
}

func ExampleSharding_Assign() {
	clusters := []*Cluster{{Name: InClusterName, Server: InClusterServer},
		{ID: "b", Server: "https://b.example.com"}, {ID: "a", Server: "https://a.example.com"}}
	shards := ShardingRoundRobin.Assign(clusters, 2, nil)
	fmt.Println(shards[InClusterServer], shards["https://a.example.com"], shards["https://b.example.com"])
	// Output: 0 1 0
}
