package main

import (
	"context"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// site is a fresh local cluster with Capstan's CRDs and a monorepo of n
// apps: each measurement gets its own, so none inherits another's load.
type site struct {
	cluster *localcluster.Cluster
	// own is the bench's own client (creating the Applications, as a CI
	// pipeline or an ApplicationSet would): not what is measured, so no
	// client-side rate limit.
	own     *rest.Config
	client  client.Client
	dir     string
	repoURL string
	// dests are the destination clusters (-clusters); none: the apps
	// deploy to the control cluster.
	dests   []*destination
	closers []func() // more to stop, last first, before the cluster
}

// onClose adds f to what close stops.
func (s *site) onClose(f func()) { s.closers = append(s.closers, f) }

func newSite(ctx context.Context, n int) (_ *site, err error) {
	s := &site{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.cluster, err = localcluster.Start(ctx, localcluster.Options{Profiling: apiServerProfile != ""}); err != nil {
		return nil, err
	}
	if err := kube.InstallCRDs(ctx, s.cluster.Config); err != nil {
		return nil, err
	}
	if err := s.startDestinations(ctx); err != nil {
		return nil, err
	}
	s.own = rest.CopyConfig(s.cluster.Config)
	s.own.QPS, s.own.Burst = 5000, 10000
	if apiServerProfile != "" {
		profCtx, stop := context.WithCancel(ctx)
		s.onClose(stop)
		if err := profileAPIServer(profCtx, s.own, apiServerProfile); err != nil {
			return nil, err
		}
	}
	if s.client, err = kube.NewClient(s.own); err != nil {
		return nil, err
	}
	if s.dir, err = os.MkdirTemp("", "capstan-bench-"); err != nil {
		return nil, err
	}
	if s.repoURL, err = monorepo(s.dir, n, "one"); err != nil {
		return nil, err
	}
	return s, nil
}

// newStandardSite is a site with the workload of the controller's runs:
// Applications in argocd, deploying to apps.
func newStandardSite(ctx context.Context, n int) (*site, workload, error) {
	s, err := newSite(ctx, n)
	if err != nil {
		return nil, workload{}, err
	}
	w := s.workload("argocd", "apps")
	if err := s.namespaces(ctx, w.ns, w.dest); err != nil {
		s.close()
		return nil, workload{}, err
	}
	if err := s.register(ctx, w.ns, w.dest); err != nil {
		s.close()
		return nil, workload{}, err
	}
	return s, w, nil
}

// workload is the site's workload of Applications in ns deploying to
// namespace dest of the site's clusters.
func (s *site) workload(ns, dest string) workload {
	w := workload{ns: ns, dest: dest, repoURL: s.repoURL}
	for _, d := range s.dests {
		w.servers = append(w.servers, d.server)
	}
	return w
}

// namespaces creates namespaces.
func (s *site) namespaces(ctx context.Context, names ...string) error {
	for _, ns := range names {
		if err := s.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	return nil
}

func (s *site) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	if s.cluster != nil {
		_ = s.cluster.Stop()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// cpuMeter returns a function that prints the CPU seconds of the measured
// system (system) and of the cluster's processes (API server, etcd and
// the rest) since the last call, per app.
func (s *site) cpuMeter(system func() float64, printf func(string, ...any) (int, error), n int) func() {
	cluster := func() float64 {
		var sum float64
		for _, pid := range s.clusterPids() {
			if sec, err := cpuSeconds(pid); err == nil {
				sum += sec
			}
		}
		return sum
	}
	lastSystem, lastCluster := system(), cluster()
	return func() {
		sys, cl := system(), cluster()
		printf("  CPU: %.1f s measured (%.1f ms per app), %.1f s the cluster (%.1f ms per app)\n",
			sys-lastSystem, 1000*(sys-lastSystem)/float64(n), cl-lastCluster, 1000*(cl-lastCluster)/float64(n))
		lastSystem, lastCluster = sys, cl
	}
}
