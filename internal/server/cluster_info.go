package server

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/cluster"
)

// clusterProbes keeps each cluster's version probe, by server URL.
type clusterProbes struct {
	mu     sync.Mutex
	probes map[string]*cluster.VersionProbe
}

// get returns server's probe, made on first use.
func (p *clusterProbes) get(server string) *cluster.VersionProbe {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.probes == nil {
		p.probes = map[string]*cluster.VersionProbe{}
	}
	probe, ok := p.probes[server]
	if !ok {
		probe = &cluster.VersionProbe{}
		p.probes[server] = probe
	}
	return probe
}

// keep forgets the probes of clusters no longer registered.
func (p *clusterProbes) keep(specs []*cluster.Spec) {
	servers := map[string]bool{}
	for _, spec := range specs {
		servers[spec.Server] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for server := range p.probes {
		if !servers[server] {
			delete(p.probes, server)
		}
	}
}

// clusterViews shows specs with their state: the version and connection
// each last answered (asked again in the background once stale, so a list
// never waits on a cluster), and how many Applications deploy to each.
func (s *Server) clusterViews(ctx context.Context, specs []*cluster.Spec) []apiwire.Cluster {
	byServer, byName := s.applicationsPerCluster(ctx)
	views := make([]apiwire.Cluster, 0, len(specs))
	for _, spec := range specs {
		v := s.clusterProbes.get(spec.Server).Get(s.clusterClient(spec.Server))
		state := connectionState{Status: connectionUnknown}
		if !v.At.IsZero() {
			at := metav1.NewTime(v.At)
			state = connectionState{Status: connectionSuccessful, AttemptedAt: &at}
			if !v.Connected {
				state.Status, state.Message = connectionFailed, v.Message
			}
		}
		count := byServer[spec.Server]
		if spec.Name != spec.Server {
			count += byName[spec.Name]
		}
		views = append(views, apiwire.Cluster{Spec: spec.Redacted(), ServerVersion: v.Version, ConnectionState: state,
			Info: apiwire.ClusterInfo{ConnectionState: state, ServerVersion: v.Version, ApplicationsCount: count}})
	}
	return views
}

// clusterClient connects to the cluster at server as the registry reaches
// it, for its version.
func (s *Server) clusterClient(server string) func() (rest.Interface, error) {
	return func() (rest.Interface, error) {
		c, err := s.state.Clusters.Get(context.Background(), v1alpha1.ApplicationDestination{Server: server})
		if err != nil {
			return nil, err
		}
		dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
		if err != nil {
			return nil, err
		}
		return dc.RESTClient(), nil
	}
}

// applicationsPerCluster counts the Applications by their destination's
// server and name.
func (s *Server) applicationsPerCluster(ctx context.Context) (byServer, byName map[string]int) {
	byServer, byName = map[string]int{}, map[string]int{}
	var apps v1alpha1.ApplicationList
	if err := s.opts.Client.List(ctx, &apps); err != nil {
		return byServer, byName // the counts are a hint: a list still answers
	}
	for _, app := range apps.Items {
		if d := app.Spec.Destination; d.Server != "" {
			byServer[d.Server]++
		} else if d.Name != "" {
			byName[d.Name]++
		}
	}
	return byServer, byName
}
