package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// destClusters is -clusters: how many destination clusters, each a local
// API server and etcd of its own, the apps are spread over (app i to
// cluster i mod K). Zero: every app deploys to the control cluster.
var destClusters int

// destination is one destination cluster of a site.
type destination struct {
	cluster *localcluster.Cluster
	server  string               // its API server URL, as its cluster Secret names it
	client  kubernetes.Interface // the bench's own, for the floor's writes
}

// startDestinations starts the site's destination clusters (-clusters),
// two at a time.
func (s *site) startDestinations(ctx context.Context) error {
	if destClusters == 0 {
		return nil
	}
	start := time.Now()
	s.dests = make([]*destination, destClusters)
	err := parallel(destClusters, 2, func(i int) error {
		c, err := localcluster.Start(ctx, localcluster.Options{})
		if err != nil {
			return fmt.Errorf("destination cluster %d: %w", i, err)
		}
		own := rest.CopyConfig(c.Config)
		own.QPS, own.Burst = 5000, 10000
		kc, err := kubernetes.NewForConfig(own)
		if err != nil {
			_ = c.Stop()
			return err
		}
		s.dests[i] = &destination{cluster: c, server: c.Config.Host, client: kc}
		return nil
	})
	for _, d := range s.dests {
		if d != nil {
			s.onClose(func() { _ = d.cluster.Stop() })
		}
	}
	if err != nil {
		return err
	}
	fmt.Printf("destinations: %d clusters started in %s\n", destClusters, time.Since(start).Round(time.Second))
	return nil
}

// register adds the destinations as cluster Secrets of namespace ns and
// creates namespace dest in each.
func (s *site) register(ctx context.Context, ns, dest string) error {
	for i, d := range s.dests {
		spec := cluster.Spec{Server: d.server, Name: fmt.Sprintf("dest-%02d", i), Config: cluster.Config{
			BearerToken:     d.cluster.Config.BearerToken,
			TLSClientConfig: cluster.TLSClientConfig{CAData: d.cluster.Config.CAData},
		}}
		sec, err := spec.Secret(ns)
		if err != nil {
			return err
		}
		if err := s.client.Create(ctx, sec); err != nil {
			return fmt.Errorf("cluster Secret of %s: %w", d.server, err)
		}
		if _, err := d.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dest}}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("namespace %s of %s: %w", dest, d.server, err)
		}
	}
	return nil
}

// destOf returns the destination of the i-th app, nil for the control
// cluster.
func (s *site) destOf(i int) *destination {
	if len(s.dests) == 0 {
		return nil
	}
	return s.dests[i%len(s.dests)]
}

// clusterPids are the processes of every cluster of the site.
func (s *site) clusterPids() []int {
	pids := s.cluster.Pids()
	for _, d := range s.dests {
		pids = append(pids, d.cluster.Pids()...)
	}
	return pids
}

// heapInUse is this process's live heap after a collection, in MiB.
func heapInUse() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}
