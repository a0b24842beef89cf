package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"golang.org/x/sync/semaphore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/hydrate"
	"github.com/capstan-cd/capstan/internal/settings"
)

// HydratorOptions run Argo CD's source hydrator in the controller: an
// Application with spec.sourceHydrator has its dry source rendered and
// pushed to its hydrated branch (hydrateTo, else syncSource), and then
// syncs syncSource as any Application syncs its source.
type HydratorOptions struct {
	// Writer commits and pushes the hydrated manifests. Default: work
	// trees in the temporary directory, a rejected push tried 3 times.
	Writer *git.Writer
	// Metadata reads the dry commit's author, date and message for
	// hydrator.metadata and the commit message. Default: Options.Renderer
	// (the repo service and the repo server's client both answer it).
	Metadata revisionMetadata
	// Credentials are the push credentials by repository URL. Default:
	// the repository-write Secrets (and repo-write-creds templates) of the
	// control namespace.
	Credentials repo.Credentials
	// Signing, if set, signs every hydrated commit, which is verified
	// before it is pushed (Argo CD's commitserver.signing.key.path; see
	// git.ImportSigningKey). Default: unsigned.
	Signing *git.Signing
	// Processors is how many Applications are hydrated at once, as Argo
	// CD's --hydration-processors; another waits for a turn, tried again
	// each second, without holding up its status. Default
	// DefaultHydrationProcessors.
	Processors int

	// turns holds a unit per hydration under way (Processors).
	turns *semaphore.Weighted
}

// DefaultHydrationProcessors is HydratorOptions.Processors' default,
// Argo CD's.
const DefaultHydrationProcessors = 5

// hydrateTurnRetry is how soon a hydration that found no free turn is
// tried again.
const hydrateTurnRetry = time.Second

// revisionMetadata reads a commit's metadata.
type revisionMetadata interface {
	RevisionMetadata(ctx context.Context, req *repo.RevisionMetadataRequest) (*repo.RevisionMetadata, error)
}

// withDefaults fills in the defaults from the controller's options.
func (h HydratorOptions) withDefaults(opts Options, c client.Reader) (*HydratorOptions, error) {
	if h.Writer == nil {
		h.Writer = git.NewWriter(filepath.Join(os.TempDir(), "capstan-hydrator"), 3)
	}
	if h.Metadata == nil {
		m, ok := opts.Renderer.(revisionMetadata)
		if !ok {
			return nil, errors.New("the source hydrator needs a renderer that reads commit metadata")
		}
		h.Metadata = m
	}
	if h.Credentials == nil {
		h.Credentials = &settings.RepoCredentials{Reader: c, Namespace: opts.Namespace, Write: true}
	}
	if h.Processors <= 0 {
		h.Processors = DefaultHydrationProcessors
	}
	h.turns = semaphore.NewWeighted(int64(h.Processors))
	return &h, nil
}

// hydrateRetry is how soon a failed hydration is tried again.
const hydrateRetry = 30 * time.Second

// hydration is what one reconcile's hydrate did.
type hydration struct {
	// pushed: the hydrated branch moved (the sync source changed).
	pushed bool
	// retry, when set, is how soon to try again (after a failure, or for
	// a turn).
	retry time.Duration
	// putOff: every hydration processor was busy; nothing was done, and a
	// refresh asked for is still to come.
	putOff bool
}

// hydrate brings the hydrated branch to the rendering of the dry source's
// current commit, recording the operation in status.sourceHydrator.
func (r *reconciler) hydrate(ctx context.Context, app *v1alpha1.Application) hydration {
	h := r.opts.Hydrator
	spec := app.Spec.SourceHydrator
	if h == nil || spec == nil || app.DeletionTimestamp != nil {
		return hydration{}
	}
	st := &app.Status.SourceHydrator
	if op := st.CurrentOperation; op != nil && op.Phase == v1alpha1.HydrateOperationPhaseFailed &&
		reflect.DeepEqual(op.SourceHydrator, *spec) && time.Since(op.StartedAt.Time) < hydrateRetry {
		return hydration{retry: hydrateRetry - time.Since(op.StartedAt.Time)}
	}
	if !h.turns.TryAcquire(1) {
		return hydration{retry: hydrateTurnRetry, putOff: true}
	}
	defer h.turns.Release(1)
	started := metav1.Now()
	fail := func(drySHA string, err error) hydration {
		st.CurrentOperation = &v1alpha1.HydrateOperation{StartedAt: started, FinishedAt: ptrNow(), Phase: v1alpha1.HydrateOperationPhaseFailed,
			Message: err.Error(), DrySHA: drySHA, SourceHydrator: *spec}
		r.opts.Log.Warn("hydration failed", "application", app.Namespace+"/"+app.Name, "error", err.Error())
		return hydration{retry: hydrateRetry}
	}
	// What the project does not permit is neither rendered nor pushed.
	c, err := r.clusters.Get(ctx, app.Spec.Destination)
	if err != nil {
		return fail("", err)
	}
	if _, err := r.checkProject(ctx, app, c); err != nil {
		return fail("", err)
	}
	commit, err := r.renderDry(ctx, app)
	if err != nil {
		return fail("", err)
	}
	if last := st.LastSuccessfulOperation; last != nil && last.DrySHA == commit.DrySHA && reflect.DeepEqual(last.SourceHydrator, *spec) {
		return hydration{} // hydrated already
	}
	if err := r.describeDry(ctx, app.Spec.Project, commit); err != nil {
		return fail(commit.DrySHA, err)
	}
	hydratedSHA, err := r.push(ctx, app, commit)
	if err != nil {
		return fail(commit.DrySHA, err)
	}
	st.CurrentOperation = &v1alpha1.HydrateOperation{StartedAt: started, FinishedAt: ptrNow(), Phase: v1alpha1.HydrateOperationPhaseHydrated,
		DrySHA: commit.DrySHA, HydratedSHA: hydratedSHA, SourceHydrator: *spec}
	st.LastSuccessfulOperation = &v1alpha1.SuccessfulHydrateOperation{DrySHA: commit.DrySHA, HydratedSHA: hydratedSHA, SourceHydrator: *spec}
	r.opts.Log.Info("hydrated", "application", app.Namespace+"/"+app.Name, "drySHA", commit.DrySHA, "hydratedSHA", hydratedSHA)
	return hydration{pushed: true}
}

// renderDry renders the dry source at its target revision.
func (r *reconciler) renderDry(ctx context.Context, app *v1alpha1.Application) (*hydrate.Commit, error) {
	spec := app.Spec.SourceHydrator
	set, err := r.settings(ctx)
	if err != nil {
		return nil, err
	}
	req := r.renderRequest(app, set, []v1alpha1.ApplicationSource{spec.DrySource.ApplicationSource()})
	_, req.NoRevisionCache = app.Annotations[v1alpha1.AnnotationRefresh]
	resp, err := r.opts.Renderer.Render(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("rendering the dry source: %w", err)
	}
	return &hydrate.Commit{RepoURL: spec.DrySource.RepoURL, DrySHA: resp.Sources[0].Revision, Path: spec.SyncSource.Path, Objects: resp.Objects}, nil
}

// describeDry reads the dry commit's author, date and message.
func (r *reconciler) describeDry(ctx context.Context, project string, c *hydrate.Commit) error {
	meta, err := r.opts.Hydrator.Metadata.RevisionMetadata(ctx, &repo.RevisionMetadataRequest{RepoURL: c.RepoURL, Revision: c.DrySHA, Project: project})
	if err != nil {
		return fmt.Errorf("reading the dry commit %s: %w", c.DrySHA, err)
	}
	c.Dry = &hydrate.DryCommit{Author: meta.Author, Message: meta.Message}
	if meta.Date != nil {
		c.Dry.Date = meta.Date.Time
	}
	return nil
}

// push commits the hydration to the hydrated branch of the sync source's
// repository and returns the commit; the branch is created when missing.
func (r *reconciler) push(ctx context.Context, app *v1alpha1.Application, c *hydrate.Commit) (string, error) {
	spec := app.Spec.SourceHydrator
	set, err := r.settings(ctx)
	if err != nil {
		return "", err
	}
	c.ReadmeTemplate = set.cm.HydratorReadmeTemplate()
	msg, err := c.Message(set.cm.HydratorCommitMessageTemplate())
	if err != nil {
		return "", err
	}
	if _, err := c.Files(); err != nil {
		return "", err // a path the hydrator may not write, before any Git work
	}
	repoURL := spec.SyncApplicationSource().RepoURL
	creds, err := r.opts.Hydrator.Credentials.ForRepo(ctx, repoURL, app.Spec.Project)
	if err != nil {
		return "", err
	}
	branch := spec.SyncSource.TargetBranch
	if spec.HydrateTo != nil && spec.HydrateTo.TargetBranch != "" {
		branch = spec.HydrateTo.TargetBranch
	}
	name, email := set.cm.HydratorCommitAuthor()
	done := r.metrics.CommitStarted(git.RedactURL(repoURL)) // argocd_commitserver_commit_*
	sha, err := r.opts.Hydrator.Writer.Commit(ctx, repoURL, creds, git.Change{Base: branch, Orphan: true,
		AuthorName: name, AuthorEmail: email, Message: msg, Edit: c.Edit, Signing: r.opts.Hydrator.Signing})
	done(err != nil)
	if err != nil {
		return "", fmt.Errorf("pushing to branch %s of %s: %w", branch, git.RedactURL(repoURL), err)
	}
	if sha == "" { // the branch already holds this hydration
		resp, err := r.opts.Renderer.Resolve(ctx, &repo.ResolveRequest{RepoURL: repoURL, Revision: branch, Project: app.Spec.Project})
		if err != nil {
			return "", err
		}
		sha = resp.Revision
	}
	return sha, nil
}
