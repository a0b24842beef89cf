// Package chaos is Capstan's fault and abuse suite: real Capstan processes
// against a real local cluster, Git server, registry and Redis, with faults
// injected while they work, and checks that every run ends converged: each
// Application synced to what Git declares, nothing pruned that Git still
// declares, no operation left running, one history entry per finished sync
// and each hook run once per sync.
//
// The faults: the process killed (SIGKILL) at random points of hooked,
// waved, pruning and plain syncs; started before its CRDs exist; the
// Kubernetes API server stopped for longer than the leader Lease; the Git
// server and the registry cut in the middle of a fetch (through
// faultproxy); Redis gone; the repository cache's disk full; and abusive
// requests while the process's peak memory is watched.
//
// `make test` runs a bounded slice (-chaos.iterations 5, 25 s outages, one
// of them mid-sync); `make chaos` runs the long one:
//
//	go test ./chaos -run . -timeout 150m -args -chaos.iterations=100 -chaos.outage=60s -chaos.outages=20
package chaos
