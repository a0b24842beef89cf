package repo

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/cache"
	"github.com/capstan-cd/capstan/internal/repo/chartrepo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
	"github.com/capstan-cd/capstan/internal/tracing"
)

// Options configure a Service. Every field but Root has a default.
type Options struct {
	// Root holds the repository clones and checkouts. Required.
	Root string
	// Credentials finds repository credentials. Default: none.
	Credentials Credentials
	// Cache stores rendered results. Default: an in-memory LRU of 10,000 entries.
	Cache cache.Cache
	// CacheTTL is how long a rendered result is kept. Default 24h: results are
	// keyed by commit, so they never go stale, only unused.
	CacheTTL time.Duration
	// FailureTTL is how long a failed render is remembered, so a broken
	// Application is not re-rendered in a tight loop. Default 20s.
	FailureTTL time.Duration
	// RenderTimeout bounds one Render call. Default 90s, as Argo CD's
	// repo server execution timeout.
	RenderTimeout time.Duration
	// RefsTTL is how long Git refs and chart repository indexes are reused. Default 3s.
	RefsTTL time.Duration
	// OCIPlainHTTP talks to OCI chart registries over plain HTTP. Default false.
	OCIPlainHTTP bool
	// MaxManifestBytes bounds the rendered objects of one request, as JSON.
	// Default 64 MiB: far above real Applications, low enough to protect
	// the controller and the cache from a runaway template.
	MaxManifestBytes int
	// MaxCheckoutBytes bounds one Git checkout. Default 2 GiB.
	MaxCheckoutBytes int64
	// ChartMaxExtractedBytes bounds an unpacked chart (see
	// chartrepo.Options.MaxExtractedBytes). Default 1 GiB.
	ChartMaxExtractedBytes int64
	// FilesMaxExtractedBytes bounds the files of an uploaded source
	// (RenderFiles) once unpacked, as Argo CD's
	// reposerver.streamed.manifest.max.extracted.size. Default
	// DefaultFilesMaxExtracted.
	FilesMaxExtractedBytes int64
	// FilesMaxArchiveBytes bounds an uploaded source's compressed archive,
	// as Argo CD's reposerver.streamed.manifest.max.tar.size. Default
	// MaxFilesArchive, the API server's upload limit.
	FilesMaxArchiveBytes int64
	// HelmUserAgent is sent to chart repositories (see
	// chartrepo.Options.UserAgent). Default Helm's.
	HelmUserAgent string
	// Directories is how directory sources are walked. Default: hidden
	// directories skipped, as in Argo CD.
	Directories directory.Walk
	// GitRequestTimeout bounds each ls-remote (see git.Options). Default
	// 0: none beyond the caller's.
	GitRequestTimeout time.Duration
	// GitLsRemoteParallelism bounds the ls-remotes running at once (see
	// git.Options). Default 0: no bound.
	GitLsRemoteParallelism int
	// GitNoBuiltinConfig leaves out git's built-in configuration (see
	// git.Options.NoBuiltinConfig). Default false.
	GitNoBuiltinConfig bool
	// ObserveGit, if set, hears of each request to a Git remote (see
	// git.Options.Observe). Default: none.
	ObserveGit func(git.Request)
	// ObserveOCI, if set, hears of each request to an OCI registry for an
	// OCI source (see ocisource.Options.Observe). Default: none.
	ObserveOCI func(ocisource.Request)
	// WaitingGit, if set, hears of callers waiting for a repository's lock
	// (see git.Options.Waiting). Default: none.
	WaitingGit func(url string, delta int)
	// ObserveTurnWait, if set, hears how long each render waited for one
	// of the ParallelismLimit turns, whether it got one or gave up.
	// Default: none.
	ObserveTurnWait func(time.Duration)
	// Isolation, when set, renders each source in a worker process with a
	// memory limit (see Isolation). Default nil: in-process, for tests and
	// the command line's local renders.
	Isolation *Isolation
	// ParallelismLimit bounds the sources rendered at once, as Argo CD's
	// reposerver.parallelism.limit; the others wait their turn. Default 0:
	// no bound (beyond Isolation's workers).
	ParallelismLimit int
	// Submodules checks out the submodules of Git sources, recursively, as
	// Argo CD's ARGOCD_GIT_MODULES_ENABLED (see git.Store.CheckoutRecursive).
	// Default false; `capstan repo-server` turns it on, as Argo CD does.
	Submodules bool
	// OCI bounds the OCI sources unpacked (see ocisource.Options: the
	// extraction bound and the layer media types allowed). Root and
	// PlainHTTP are the Service's. Default: Argo CD's bounds.
	OCI ocisource.Options
	// Plugins configure the config management plugins sources may render
	// with. Default: the sockets in Argo CD's plugin directory
	// (plugin.DefaultSocketDir), none when it does not exist.
	Plugins plugin.Options
}

// Service resolves and fetches sources, renders them (in-process or in
// worker processes) and caches the results.
type Service struct {
	opts    Options
	git     *git.Store
	charts  *chartrepo.Client
	oci     *ocisource.Client
	plugins *plugin.Client
	workers *pool         // nil: render in-process
	turns   chan struct{} // nil: no ParallelismLimit
}

var _ Renderer = (*Service)(nil)

// NewService returns a Service with opts' defaults filled in.
func NewService(opts Options) *Service {
	if opts.Credentials == nil {
		opts.Credentials = NoCredentials{}
	}
	if opts.Cache == nil {
		opts.Cache = cache.NewMemory(10000)
	}
	if opts.CacheTTL == 0 {
		opts.CacheTTL = 24 * time.Hour
	}
	if opts.FailureTTL == 0 {
		opts.FailureTTL = 20 * time.Second
	}
	if opts.RenderTimeout == 0 {
		opts.RenderTimeout = 90 * time.Second
	}
	if opts.MaxManifestBytes == 0 {
		opts.MaxManifestBytes = 64 << 20
	}
	s := &Service{
		opts: opts,
		git: git.NewStore(git.Options{Root: filepath.Join(opts.Root, "git"), RefsTTL: opts.RefsTTL, MaxCheckoutBytes: opts.MaxCheckoutBytes,
			RequestTimeout: opts.GitRequestTimeout, Observe: opts.ObserveGit, Waiting: opts.WaitingGit, LsRemoteParallelism: opts.GitLsRemoteParallelism,
			NoBuiltinConfig: opts.GitNoBuiltinConfig}),
		charts: chartrepo.NewClient(chartrepo.Options{Root: filepath.Join(opts.Root, "charts"), IndexTTL: opts.RefsTTL, PlainHTTP: opts.OCIPlainHTTP,
			MaxExtractedBytes: opts.ChartMaxExtractedBytes, UserAgent: opts.HelmUserAgent}),
	}
	oci := opts.OCI
	oci.Root, oci.PlainHTTP, oci.TagsTTL = filepath.Join(opts.Root, "oci"), opts.OCIPlainHTTP, cmp.Or(oci.TagsTTL, opts.RefsTTL)
	if oci.Observe == nil {
		oci.Observe = opts.ObserveOCI
	}
	s.oci = ocisource.New(oci)
	plugins := opts.Plugins
	plugins.MaxArchiveBytes = cmp.Or(plugins.MaxArchiveBytes, opts.MaxCheckoutBytes)
	plugins.MaxManifestBytes = cmp.Or(plugins.MaxManifestBytes, opts.MaxManifestBytes)
	s.plugins = plugin.New(plugins)
	if opts.ParallelismLimit > 0 {
		s.turns = make(chan struct{}, opts.ParallelismLimit)
	}
	if opts.Isolation != nil {
		s.workers = newPool(*opts.Isolation, filepath.Join(opts.Root, "workers"), opts.MaxManifestBytes, func(ctx context.Context, project, repoURL, name, version string) (string, error) {
			return dependencyFetcher{s, project}.FetchDependency(ctx, repoURL, name, version)
		})
	}
	return s
}

// renderSource renders one source, in a worker when the Service isolates
// rendering and the source runs code from its repository.
func (s *Service) renderSource(ctx context.Context, in *sourceInput) ([]*unstructured.Unstructured, v1alpha1.ApplicationSourceType, error) {
	release, err := s.turn(ctx)
	if err != nil {
		return nil, "", err
	}
	defer release()
	if p, err := s.pluginSource(ctx, in); p != nil || err != nil {
		if err != nil {
			return nil, v1alpha1.SourceTypePlugin, err
		}
		objs, err := s.plugins.Render(ctx, p)
		return objs, v1alpha1.SourceTypePlugin, err
	}
	if s.workers != nil && in.runsRepositoryCode(ctx) {
		return s.workers.render(ctx, in)
	}
	return renderSource(ctx, in)
}

// turn waits for one of the reposerver.parallelism.limit turns to render;
// release gives it back.
func (s *Service) turn(ctx context.Context) (release func(), err error) {
	if s.turns == nil {
		return func() {}, nil
	}
	if observe := s.opts.ObserveTurnWait; observe != nil {
		start := time.Now()
		defer func() { observe(time.Since(start)) }()
	}
	select {
	case s.turns <- struct{}{}:
		return func() { <-s.turns }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a turn to render (reposerver.parallelism.limit is %d): %w", cap(s.turns), ctx.Err())
	}
}

// GitStore exposes the shared clones, for stats and webhooks.
func (s *Service) GitStore() *git.Store { return s.git }

// Render resolves each source's revision, then returns the cached result for
// that exact input or renders it.
func (s *Service) Render(ctx context.Context, req *Request) (*Response, error) {
	ctx, span := tracing.Tracer("repo").Start(ctx, "render", trace.WithAttributes(attribute.String("application", req.AppName),
		attribute.Int("sources", len(req.Sources))))
	defer span.End()
	resp, err := s.resolveAndRender(ctx, req)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return resp, err
}

func (s *Service) resolveAndRender(ctx context.Context, req *Request) (*Response, error) {
	if len(req.Sources) == 0 {
		return nil, errors.New("no sources to render")
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.RenderTimeout)
	defer cancel()

	resolved, err := s.resolveAll(ctx, req)
	if err != nil {
		return nil, err
	}
	key := cacheKey(req, resolved)
	if !req.NoCache {
		if resp, err, ok := s.cached(ctx, key); ok {
			return resp, err
		}
	}
	resp, err := s.render(ctx, req, resolved)
	var data []byte
	if err == nil {
		if data, err = json.Marshal(cacheEntry{Response: resp}); err == nil && len(data) > s.opts.MaxManifestBytes {
			err = fmt.Errorf("rendered manifests of %q are %d bytes, over the limit of %d", req.AppName, len(data), s.opts.MaxManifestBytes)
		}
	}
	if err != nil {
		resp = nil
		s.storeFailure(ctx, key, err)
	} else {
		_ = s.opts.Cache.Set(ctx, key, data, s.opts.CacheTTL)
	}
	return resp, err
}

// Resolve resolves one revision afresh.
func (s *Service) Resolve(ctx context.Context, req *ResolveRequest) (*ResolveResponse, error) {
	creds, err := s.opts.Credentials.ForRepo(ctx, req.RepoURL, req.Project)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", git.RedactURL(req.RepoURL), err)
	}
	if c := req.Credentials; c != nil {
		if err := c.apply(ctx, &creds, req.RepoURL); err != nil {
			return nil, fmt.Errorf("credentials for %s: %w", git.RedactURL(req.RepoURL), err)
		}
	}
	var rev string
	if req.Chart != "" {
		rev, err = s.charts.Resolve(ctx, req.RepoURL, req.Chart, req.Revision, creds, true)
	} else if ocisource.IsSource(v1alpha1.ApplicationSource{RepoURL: req.RepoURL}) {
		if req.Credentials != nil && req.Revision == "HEAD" {
			// A connection test names no artifact: the tags are listed.
			_, err = s.oci.Tags(ctx, req.RepoURL, creds)
			return &ResolveResponse{}, err
		}
		rev, err = s.oci.Resolve(ctx, req.RepoURL, req.Revision, creds, true)
	} else if err = validGitSource(req.RepoURL, req.Revision); err == nil {
		rev, err = s.git.Repo(req.RepoURL, creds).ResolveTagged(ctx, req.Revision, req.TagPrefix, true)
	}
	if err != nil {
		return nil, err
	}
	return &ResolveResponse{Revision: rev}, nil
}

// resolved is one source with its revision resolved and repository handle.
type resolved struct {
	source   v1alpha1.ApplicationSource
	revision string
	repo     *git.Repo // nil for Helm chart repositories and OCI sources
	creds    git.Creds
	// oci: an OCI source, whose revision is its artifact's digest.
	oci bool
}

func (s *Service) resolveAll(ctx context.Context, req *Request) ([]resolved, error) {
	out := make([]resolved, len(req.Sources))
	for i, src := range req.Sources {
		rev := src.TargetRevision
		if i < len(req.Revisions) && req.Revisions[i] != "" {
			rev = req.Revisions[i]
		}
		out[i].source = src
		creds, err := s.opts.Credentials.ForRepo(ctx, src.RepoURL, req.Project)
		if err != nil {
			return nil, fmt.Errorf("credentials for %s: %w", git.RedactURL(src.RepoURL), err)
		}
		out[i].creds = creds
		if src.Chart != "" {
			if out[i].revision, err = s.charts.Resolve(ctx, src.RepoURL, src.Chart, rev, creds, req.NoCache || req.NoRevisionCache); err != nil {
				return nil, err
			}
			continue
		}
		if ocisource.IsSource(src) {
			out[i].oci = true
			if out[i].revision, err = s.oci.Resolve(ctx, src.RepoURL, rev, creds, req.NoCache || req.NoRevisionCache); err != nil {
				return nil, err
			}
			continue
		}
		if err := validGitSource(src.RepoURL, rev); err != nil {
			return nil, err
		}
		out[i].repo = s.git.Repo(src.RepoURL, creds)
		if out[i].revision, err = out[i].repo.ResolveTagged(ctx, rev, src.TagPrefix, req.NoCache || req.NoRevisionCache); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// validGitSource refuses a Git repository URL or revision git could take
// for anything but a repository and a revision, before either is used.
func validGitSource(repoURL, revision string) error {
	if err := git.ValidateURL(repoURL); err != nil {
		return err
	}
	return git.ValidateRevision(revision)
}

func (s *Service) render(ctx context.Context, req *Request, sources []resolved) (*Response, error) {
	roots := make([]string, len(sources))
	refs := map[string]string{}
	for i := range sources {
		// Charts, and sources whose files others refer to ($ref), are on
		// disk before any source renders; the others only when they need it.
		if sources[i].source.Chart != "" || sources[i].source.Ref != "" || sources[i].oci {
			if err := s.fetchSource(ctx, &sources[i], &roots[i], refs); err != nil {
				return nil, err
			}
		}
	}
	resp := &Response{Sources: make([]SourceResult, len(sources))}
	for i, src := range sources {
		resp.Sources[i].Revision = src.revision
		if err := s.verify(ctx, req, src, &resp.Sources[i]); err != nil {
			return nil, err
		}
		if src.source.Ref != "" && src.source.Path == "" && src.source.Chart == "" {
			continue // only referenced by other sources' $ref/ value files
		}
		objs, typ, err := s.renderOne(ctx, req, &sources[i], &roots[i], refs)
		if err != nil {
			if len(sources) > 1 {
				return nil, fmt.Errorf("source %d (%s): %w", i+1, git.RedactURL(src.source.RepoURL), err)
			}
			return nil, err
		}
		resp.Sources[i].Type = typ
		resp.Objects = append(resp.Objects, objs...)
	}
	resp.Images = imagesOf(resp.Objects)
	return resp, nil
}

// renderOne renders one source: a plain directory of manifests from its
// commit's objects, anything else from its files on disk.
func (s *Service) renderOne(ctx context.Context, req *Request, src *resolved, root *string, refs map[string]string) ([]*unstructured.Unstructured, v1alpha1.ApplicationSourceType, error) {
	if *root == "" {
		objs, ok, err := s.renderFromObjects(ctx, *src, req)
		if err != nil || ok {
			return objs, v1alpha1.SourceTypeDirectory, err
		}
		if err := s.fetchSource(ctx, src, root, refs); err != nil {
			return nil, "", err
		}
	}
	return s.renderSource(ctx, &sourceInput{
		root:     *root,
		source:   src.source,
		revision: src.revision,
		refs:     refs,
		req:      req,
		walk:     s.opts.Directories,
		deps:     dependencyFetcher{s, req.Project},
	})
}

// fetchSource puts a source's files on disk: a chart or an OCI artifact
// unpacked, or a commit checked out; root is set to where, and refs to it
// for a source others refer to.
func (s *Service) fetchSource(ctx context.Context, src *resolved, root *string, refs map[string]string) error {
	if src.oci {
		dir, err := s.oci.Fetch(ctx, src.source.RepoURL, src.revision, src.creds)
		if err != nil {
			return err
		}
		*root = dir
		if src.source.Ref != "" {
			refs[src.source.Ref] = dir
		}
		return nil
	}
	if src.source.Chart != "" {
		chartDir, err := s.charts.Fetch(ctx, src.source.RepoURL, src.source.Chart, src.revision, src.creds)
		if err != nil {
			return err
		}
		// The unpacked chart is rendered like a chart directory in Git.
		*root = filepath.Dir(chartDir)
		src.source.Path = filepath.Base(chartDir)
		return nil
	}
	checkout := src.repo.Checkout
	if s.opts.Submodules {
		checkout = func(ctx context.Context, sha string) (string, error) {
			return s.git.CheckoutRecursive(ctx, src.repo, sha)
		}
	}
	dir, err := checkout(ctx, src.revision)
	if err != nil {
		return err
	}
	*root = dir
	if src.source.Ref != "" {
		refs[src.source.Ref] = dir
	}
	return nil
}

// verify checks a source's commit signature and history when the request
// asks for it, and records the outcome in its result.
func (s *Service) verify(ctx context.Context, req *Request, src resolved, out *SourceResult) error {
	if src.repo == nil {
		return nil
	}
	if req.VerifySignature {
		signed, err := src.repo.Signature(ctx, src.revision)
		if err != nil {
			return err
		}
		out.Signed = signed
	}
	if req.VerifyHistory.covers(src.source.RepoURL) {
		ring, err := git.NewKeyring(req.VerifyHistory.Keys)
		if err != nil {
			return err
		}
		history, err := src.repo.VerifyHistory(ctx, src.revision, ring, MaxVerifiedHistory)
		if err != nil {
			return err
		}
		out.History = history
	}
	return nil
}

// cacheKey identifies a render: every input that can change the output.
func cacheKey(req *Request, sources []resolved) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{req.AppName, req.Namespace, req.KubeVersion, req.APIVersions, req.VerifySignature, req.KustomizeBuildOptions, req.Project, req.HelmValuesFileSchemes, req.KustomizeVersions, req.VerifyHistory, req.DisabledTools})
	if req.ManifestGeneratePaths != "" { // what a plugin is sent may depend on it
		_ = enc.Encode(req.ManifestGeneratePaths)
	}
	for _, s := range sources {
		_ = enc.Encode([]any{git.NormalizeURL(s.source.RepoURL), s.revision, s.source})
	}
	return "manifests|" + hex.EncodeToString(h.Sum(nil))
}

// cacheEntry is a stored render: a response or the error it failed with.
type cacheEntry struct {
	Response *Response `json:"response,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// ErrCachedFailure wraps an error remembered from a recent failed render.
var ErrCachedFailure = errors.New("rendering failed recently (cached; a hard refresh retries now)")

func (s *Service) cached(ctx context.Context, key string) (*Response, error, bool) {
	data, ok, err := s.opts.Cache.Get(ctx, key)
	if err != nil || !ok {
		return nil, nil, false
	}
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, nil, false
	}
	if e.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrCachedFailure, e.Error), true
	}
	return e.Response, nil, true
}

func (s *Service) storeFailure(ctx context.Context, key string, renderErr error) {
	if errors.Is(renderErr, context.Canceled) || errors.Is(renderErr, errWorkerLost) {
		return // the caller gave up, or a worker was lost: nothing was learnt about the source
	}
	data, err := json.Marshal(cacheEntry{Error: renderErr.Error()})
	if err != nil {
		return
	}
	_ = s.opts.Cache.Set(ctx, key, data, s.opts.FailureTTL)
}

// UnmarshalJSON decodes objects with integers kept as int64.
func (r *Response) UnmarshalJSON(data []byte) error {
	var raw struct {
		Objects []json.RawMessage `json:"objects"`
		Sources []SourceResult    `json:"sources"`
		Images  []string          `json:"images"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	r.Sources, r.Images = raw.Sources, raw.Images
	r.Objects = make([]*unstructured.Unstructured, 0, len(raw.Objects))
	for _, o := range raw.Objects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(o); err != nil {
			return err
		}
		r.Objects = append(r.Objects, u)
	}
	return nil
}

func imagesOf(objs []*unstructured.Unstructured) []string {
	images := manifest.Images(objs)
	if images == nil {
		images = []string{}
	}
	return images
}

// shortSHA is the first seven characters of a commit SHA.
func shortSHA(rev string) string { return shortened(rev, 7) }

// shortened is a commit SHA's first n characters; a chart version is kept whole.
func shortened(rev string, n int) string {
	if len(rev) > n && !strings.Contains(rev, ".") {
		return rev[:n]
	}
	return rev
}
