package server

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/apiwire"
	reposvc "github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/chartrepo"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Connection states of a repository or cluster, as Argo CD's API words them.
const (
	connectionSuccessful = "Successful"
	connectionFailed     = "Failed"
	connectionUnknown    = "Unknown" // a cluster not asked yet
)

// connectionTTL is how long a repository's connection state is reused;
// forceRefresh tests it anew.
const connectionTTL = 3 * time.Minute

// connectionState is whether Capstan can reach a repository with its
// stored credentials (or a cluster), and when that was tried.
type connectionState = apiwire.ConnectionState

// connections remembers repositories' connection states.
type connections struct {
	mu    sync.Mutex
	state map[string]connectionState
}

// repoView is a stored repository as the API shows it, with whether it
// can be reached.
type repoView struct {
	settings.Repository
	ConnectionState *connectionState `json:"connectionState,omitempty"`
}

// withConnections tests the repositories (at most 8 at a time, reusing
// states younger than connectionTTL unless force) and returns their views.
func (s *Server) withConnections(ctx context.Context, repos []*settings.Repository, force bool) []repoView {
	out := make([]repoView, len(repos))
	var g errgroup.Group
	g.SetLimit(8)
	for i, r := range repos {
		out[i].Repository = r.Redacted()
		g.Go(func() error {
			st := s.connection(ctx, r, force)
			out[i].ConnectionState = &st
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// connection is one repository's connection state.
func (s *Server) connection(ctx context.Context, r *settings.Repository, force bool) connectionState {
	key := r.URL + "\x00" + r.Project
	s.conns.mu.Lock()
	st, ok := s.conns.state[key]
	s.conns.mu.Unlock()
	if ok && !force && time.Since(st.AttemptedAt.Time) < connectionTTL {
		return st
	}
	ctx, cancel := context.WithTimeout(ctx, repoTestTimeout)
	defer cancel()
	var err error
	switch {
	case r.Type == "helm" && (r.EnableOCI || chartrepo.IsOCI(r.URL)):
		// An OCI registry has no index to fetch without a chart's name:
		// only the credentials can be checked.
		_, err = r.Resolve(ctx)
	case r.Type == "oci":
		// An OCI source's repository: its tags can be listed.
		_, err = s.opts.Renderer.Refs(ctx, &reposvc.RefsRequest{RepoURL: r.URL, Project: r.Project, OCI: true})
	case r.Type == "helm":
		_, err = s.opts.Renderer.Charts(ctx, &reposvc.ChartsRequest{RepoURL: r.URL, Project: r.Project})
	default:
		_, err = s.opts.Renderer.Resolve(ctx, &reposvc.ResolveRequest{RepoURL: r.URL, Revision: "HEAD", Project: r.Project})
	}
	now := metav1.Now()
	st = connectionState{Status: connectionSuccessful, AttemptedAt: &now}
	if err != nil {
		st.Status, st.Message = connectionFailed, err.Error()
	}
	s.conns.mu.Lock()
	if s.conns.state == nil {
		s.conns.state = map[string]connectionState{}
	}
	s.conns.state[key] = st
	s.conns.mu.Unlock()
	return st
}
