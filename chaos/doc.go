// Package chaos is Capstan's fault and abuse suite: real Capstan processes
// against a real local cluster and Git server, with faults injected while
// they work (the process killed at random points of its syncs, the
// Kubernetes API server stopped and restarted), and checks that every run
// ends converged: each Application synced to what Git declares, nothing
// pruned that Git still declares, no operation left running, one history
// entry per finished sync and each hook run once per sync.
//
// `make test` runs a bounded slice (-chaos.iterations 5); `make chaos`
// runs the long one:
//
//	go test ./chaos -run . -timeout 90m -args -chaos.iterations=100
package chaos
