package controller

import (
	"context"
	"iter"
	"log/slog"
	"path"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
)

// commitSHA is a revision pinned to one commit, which never moves.
var commitSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// revisionPoller detects new commits and chart versions once per
// repository and revision, not once per Application: every interval, and
// at once for a repository a webhook names, it resolves each distinct
// (repository, chart, targetRevision) the Applications follow and
// re-queues the Applications whose last compared revision differs.
type revisionPoller struct {
	namespaces appNamespaces
	renderer   repo.Renderer
	enqueue    func(context.Context, *v1alpha1.Application)
	interval   time.Duration
	// changes names repositories that changed (webhooks); optional.
	changes <-chan repo.Change
	log     *slog.Logger
	// hydrating follows the dry sources of source hydrators too.
	hydrating bool
	// jitter, if set, spreads the re-queues one webhook causes (argocd-cm
	// webhook.refresh.jitter); polls are not spread.
	jitter func(context.Context) settings.RefreshJitter
}

// drySource is the index standing for a source hydrator's dry source.
const drySource = -1

// followedSources are the sources of app whose revisions are followed,
// by index (drySource for the dry source).
func (p *revisionPoller) followedSources(app *v1alpha1.Application) iter.Seq2[int, v1alpha1.ApplicationSource] {
	return func(yield func(int, v1alpha1.ApplicationSource) bool) {
		for i, src := range app.Spec.GetSources() {
			if !yield(i, src) {
				return
			}
		}
		if h := app.Spec.SourceHydrator; h != nil && p.hydrating {
			yield(drySource, h.DrySource.ApplicationSource())
		}
	}
}

// Start polls until ctx ends; it is a manager Runnable, started once the
// Applications cache has synced.
func (p *revisionPoller) Start(ctx context.Context) error {
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			p.poll(ctx, repo.Change{})
		case c := <-p.changes:
			p.poll(ctx, c)
		}
	}
}

// NeedLeaderElection makes only the elected controller poll.
func (p *revisionPoller) NeedLeaderElection() bool { return true }

// followed is one source revision and the Applications that follow it.
type followed struct {
	req  repo.ResolveRequest
	apps []follower
}

type follower struct {
	app    *v1alpha1.Application
	source int
	// touched: the change's files are under the source's own path, so a
	// new revision changes what it renders. Those are re-queued first: a
	// webhook's push reaches the Applications it is about before the
	// thousand others following the same repository are re-checked.
	touched bool
}

// poll resolves every followed revision (of the changed repository only,
// when one is named). An Application whose manifest-generate-paths the
// change's files do not touch is left to the next poll.
func (p *revisionPoller) poll(ctx context.Context, change repo.Change) {
	repoURL := change.URL
	apps, err := p.namespaces.list(ctx)
	if err != nil {
		p.log.Error("listing Applications to poll their repositories", "error", err)
		return
	}
	groups := map[repo.ResolveRequest]*followed{}
	for _, app := range apps {
		if app.DeletionTimestamp != nil {
			continue
		}
		for j, src := range p.followedSources(app) {
			if repoURL != "" && (git.NormalizeURL(src.RepoURL) != git.NormalizeURL(repoURL) ||
				!v1alpha1.PathsChanged(app.ManifestGeneratePaths(src), change.Files)) {
				continue
			}
			rev := src.TargetRevision
			if rev == "" {
				rev = "HEAD"
			}
			if commitSHA.MatchString(rev) {
				continue
			}
			req := repo.ResolveRequest{RepoURL: src.RepoURL, Project: app.Spec.Project, Chart: src.Chart, Revision: rev, TagPrefix: src.TagPrefix}
			g := groups[req]
			if g == nil {
				g = &followed{req: req}
				groups[req] = g
			}
			g.apps = append(g.apps, newFollower(app, j, src, change))
		}
	}
	q := &requeues{enqueue: p.enqueue}
	if repoURL != "" && p.jitter != nil {
		q.jitter = p.jitter(ctx)
	}
	work := make(chan *followed)
	var wg sync.WaitGroup
	for range min(8, len(groups)) {
		wg.Go(func() {
			for g := range work {
				p.check(ctx, g, q)
			}
		})
	}
	for _, g := range groups {
		work <- g
	}
	close(work)
	wg.Wait()
}

// check resolves one revision and re-queues the Applications behind it.
// A revision that cannot be resolved is left to each Application's own
// reconcile, which reports the error on its status.
func (p *revisionPoller) check(ctx context.Context, g *followed, q *requeues) {
	resp, err := p.renderer.Resolve(ctx, &g.req)
	if err != nil {
		p.log.Debug("resolving a followed revision", "repo", git.RedactURL(g.req.RepoURL), "revision", g.req.Revision, "error", err)
		return
	}
	for _, first := range []bool{true, false} {
		for _, f := range g.apps {
			if f.touched == first && comparedRevision(f.app, f.source) != resp.Revision {
				q.add(ctx, f.app)
			}
		}
	}
}

// requeues re-queues the Applications one poll found behind, counting
// them: beyond the jitter's threshold each waits its random delay first.
type requeues struct {
	enqueue func(context.Context, *v1alpha1.Application)
	jitter  settings.RefreshJitter
	n       atomic.Int64
}

func (q *requeues) add(ctx context.Context, app *v1alpha1.Application) {
	d := q.jitter.Delay(int(q.n.Add(1)))
	if d == 0 {
		q.enqueue(ctx, app)
		return
	}
	time.AfterFunc(d, func() { q.enqueue(ctx, app) })
}

// newFollower is source j (src) of app, following a repository change.
func newFollower(app *v1alpha1.Application, j int, src v1alpha1.ApplicationSource, change repo.Change) follower {
	touched := len(change.Files) > 0 && v1alpha1.PathsChanged([]string{sourceDir(src.Path)}, change.Files)
	return follower{app: app, source: j, touched: touched}
}

// sourceDir is a source's path as PathsChanged compares it.
func sourceDir(p string) string {
	if p = strings.TrimPrefix(path.Clean("/"+p), "/"); p == "" {
		return "."
	}
	return p
}

// comparedRevision is the revision of source i the status last compared
// (of the dry source: last hydrated).
func comparedRevision(app *v1alpha1.Application, i int) string {
	if i == drySource {
		if last := app.Status.SourceHydrator.LastSuccessfulOperation; last != nil {
			return last.DrySHA
		}
		return ""
	}
	if len(app.Spec.Sources) > 0 {
		if i < len(app.Status.Sync.Revisions) {
			return app.Status.Sync.Revisions[i]
		}
		return ""
	}
	return app.Status.Sync.Revision
}
