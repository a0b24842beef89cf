package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
)

// applicationRoutes registers the Application service: reading and
// changing Applications, their operations, resources, logs, streams and
// the terminal.
func (s *Server) applicationRoutes() {
	s.mux.HandleFunc("GET /api/v1/applications", s.api(s.listApplications))
	s.mux.HandleFunc("POST /api/v1/applications", s.api(s.createApplication))
	s.mux.HandleFunc("GET /api/v1/applications/{name}", s.api(s.getApplication))
	s.mux.HandleFunc("POST /api/v1/applications/{name}/sync", s.api(s.syncApplication))
	s.mux.HandleFunc("DELETE /api/v1/applications/{name}", s.api(s.deleteApplication))
	s.mux.HandleFunc("PUT /api/v1/applications/{name}", s.api(s.updateApplication))
	s.mux.HandleFunc("PUT /api/v1/applications/{name}/spec", s.api(s.updateApplicationSpec))
	s.mux.HandleFunc("PATCH /api/v1/applications/{name}", s.api(s.patchApplication))
	s.mux.HandleFunc("POST /api/v1/applications/{name}/rollback", s.api(s.rollbackApplication))
	s.mux.HandleFunc("DELETE /api/v1/applications/{name}/operation", s.api(s.terminateOperation))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/events", s.api(s.applicationEvents))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/manifests", s.api(s.manifests))
	s.mux.HandleFunc("POST "+manifestsWithFilesPath, s.api(s.manifestsWithFiles))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/managed-resources", s.api(s.managedResources))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/resource-tree", s.api(s.resourceTree))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/resource", s.api(s.liveResource))
	s.mux.HandleFunc("POST /api/v1/applications/{name}/resource", s.api(s.patchResource))
	s.mux.HandleFunc("DELETE /api/v1/applications/{name}/resource", s.api(s.deleteResource))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/resource/actions", s.api(s.listActions))
	s.mux.HandleFunc("GET /terminal", s.streaming(s.terminal))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/logs", s.streaming(s.podLogs))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/pods/{podName}/logs", s.streaming(s.podLogs))
	s.mux.HandleFunc("POST /api/v1/applications/{name}/resource/actions", s.api(s.runAction))
	s.mux.HandleFunc("POST /api/v1/applications/{name}/resource/actions/v2", s.api(s.runAction))
	s.mux.HandleFunc("GET /api/v1/stream/applications", s.streaming(s.streamApplications))
	s.mux.HandleFunc("GET /api/v1/stream/applications/{applicationName}/resource-tree", s.streaming(s.streamResourceTree))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/syncwindows", s.api(s.applicationSyncWindows))
	s.mux.HandleFunc("GET /api/v1/applications/{appName}/server-side-diff", s.api(s.serverSideDiff))
	s.mux.HandleFunc("POST /api/v1/applications/{appName}/server-side-diff", s.api(s.serverSideDiff))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/links", s.api(s.applicationLinks))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/resource/links", s.api(s.resourceLinks))
}

// appObject is an Application's RBAC object: <project>/<name>, or
// <project>/<namespace>/<name> outside the control namespace.
func (s *Server) appObject(app *v1alpha1.Application) string {
	project := app.Spec.Project
	if project == "" {
		project = v1alpha1.DefaultAppProjectName
	}
	if app.Namespace != s.opts.Namespace {
		return project + "/" + app.Namespace + "/" + app.Name
	}
	return project + "/" + app.Name
}

// listApplications answers GET /api/v1/applications with the Applications
// the caller may get, filtered by the projects, selector, repo and name
// query parameters as Argo CD's API does.
func (s *Server) listApplications(r *http.Request, c *caller) (any, error) {
	q := r.URL.Query()
	ns := cmp.Or(q.Get("appNamespace"), s.opts.Namespace)
	selector, err := parseSelector(q.Get("selector"))
	if err != nil {
		return nil, badRequest(err.Error())
	}
	if !s.namespaceEnabled(ns) {
		// As Argo CD's: none of a namespace it does not serve.
		return &v1alpha1.ApplicationList{Items: []v1alpha1.Application{}}, nil
	}
	paging, err := parsePage(q)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	apps, version, err := s.appsInOrder(r.Context(), ns, selector, paging.after)
	if err != nil {
		return nil, err
	}
	projects := append(q["projects"], q["project"]...)
	// A page's checks stop once it is full.
	out, next := paging.take(apps, func(app *v1alpha1.Application) bool {
		if name := q.Get("name"); name != "" && app.Name != name {
			return false
		}
		if len(projects) > 0 && !slices.Contains(projects, app.Spec.Project) {
			return false
		}
		if repo := q.Get("repo"); repo != "" && !usesRepo(app, repo) {
			return false
		}
		return c.can(rbac.ResourceApplications, rbac.ActionGet, s.appObject(app))
	})
	return applicationListAnswer{s: s, list: appList{version: version, next: next, apps: out, whole: paging == listPage{}}, fields: parseFields(q)}, nil
}

// usesRepo reports whether one of the app's sources is the repository.
func usesRepo(app *v1alpha1.Application, repoURL string) bool {
	want := git.NormalizeURL(repoURL)
	return slices.ContainsFunc(app.Spec.GetSources(), func(s v1alpha1.ApplicationSource) bool { return git.NormalizeURL(s.RepoURL) == want })
}

// getApplication answers GET /api/v1/applications/{name}; with
// ?refresh=normal or hard it first asks the controller to refresh the app
// and answers once it has, as Argo CD does.
func (s *Server) getApplication(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	if refresh := r.URL.Query().Get("refresh"); refresh != "" {
		return s.refreshApp(r, app, refresh)
	}
	return app, nil
}

// resourcesFinalizer makes deleting an Application delete its resources.
const resourcesFinalizer = v1alpha1.ResourcesFinalizerName

// syncRequest is the body of POST /api/v1/applications/{name}/sync.
type syncRequest struct {
	Revision    string                           `json:"revision"`
	Prune       bool                             `json:"prune"`
	DryRun      bool                             `json:"dryRun"`
	Resources   []v1alpha1.SyncOperationResource `json:"resources"`
	SyncOptions struct {
		Items []string `json:"items"`
	} `json:"syncOptions"`
	Retry *v1alpha1.RetryStrategy `json:"retryStrategy"`
	// Strategy is hook (the default) or apply, either with force.
	Strategy *v1alpha1.SyncStrategy `json:"strategy"`
	// Manifests, when set, are synced instead of what the sources render
	// (argocd app sync --local).
	Manifests []string `json:"manifests"`
	// Infos are name/value notes kept on the operation.
	Infos []*v1alpha1.Info `json:"infos"`
	// Revisions of several sources, by SourcePositions (from 1) or
	// SourceNames.
	Revisions       []string  `json:"revisions"`
	SourcePositions []jsonInt `json:"sourcePositions"`
	SourceNames     []string  `json:"sourceNames"`
}

// loadApp reads the named Application (in appNamespace, default the
// control namespace) and checks the caller may act on it, writing the
// error response when not. A missing Application is 404 only to a caller
// who may do the action on that name in every project; to others it reads
// as refused, so names do not leak.
func (s *Server) loadApp(r *http.Request, c *caller, action rbac.Action) (*v1alpha1.Application, error) {
	ns := r.URL.Query().Get("appNamespace")
	if ns == "" {
		ns = s.opts.Namespace
	}
	if r.URL.Query().Has("appNamespace") {
		if err := checkName("namespace", ns); err != nil {
			return nil, err
		}
	}
	if !s.namespaceEnabled(ns) {
		// As Argo CD's: denied, whether or not such an app exists.
		return nil, withStatus(http.StatusForbidden, errors.New("permission denied: "+namespaceNotPermitted(ns)))
	}
	app := &v1alpha1.Application{}
	err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: r.PathValue("name")}, app)
	if apierrors.IsNotFound(err) {
		if c.can(rbac.ResourceApplications, action, "*/"+r.PathValue("name")) {
			return nil, notFound(fmt.Sprintf("application %s not found in namespace %s", r.PathValue("name"), ns))
		}
		return nil, c.forbidden(rbac.ResourceApplications, action, "*/"+r.PathValue("name"))
	}
	if err != nil {
		return nil, err
	}
	if err := c.may(rbac.ResourceApplications, action, s.appObject(app)); err != nil {
		return nil, err
	}
	if !s.appNamespaceAllowed(r.Context(), app) {
		return nil, badRequest(appNotAllowedInProject(app))
	}
	return app, nil
}

// checkLocalSync checks a sync of local manifests as Argo CD does: the
// caller needs the override action, and automated sync must be off unless
// it is a dry run.
func (s *Server) checkLocalSync(c *caller, app *v1alpha1.Application, req *syncRequest) error {
	if len(req.Manifests) == 0 {
		return nil
	}
	if err := c.may(rbac.ResourceApplications, rbac.ActionOverride, s.appObject(app)); err != nil {
		return err
	}
	if app.Spec.SyncPolicy.IsAutomatedSyncEnabled() && !req.DryRun {
		return badRequest("cannot use local sync when Automatic Sync Policy is enabled unless for dry run")
	}
	return nil
}

// checkRevisions checks a sync to revisions (by source; "" keeps the
// source's own) as Argo CD does: another revision than a source's own is
// refused while automated sync is on (but for a dry run), and with
// argocd-cm's application.sync.requireOverridePrivilegeForRevisionSync
// it needs the override action.
func (s *Server) checkRevisions(ctx context.Context, c *caller, app *v1alpha1.Application, revisions []string, dryRun bool) error {
	sources := app.Spec.GetSources()
	var cm *settings.ArgoCD
	for i, rev := range revisions {
		if i >= len(sources) || rev == "" || rev == cmp.Or(sources[i].TargetRevision, "HEAD") {
			continue
		}
		if cm == nil {
			var err error
			if cm, err = settings.LoadArgoCD(ctx, s.opts.Client, s.opts.Namespace); err != nil {
				return err
			}
		}
		if cm.RevisionSyncNeedsOverride() {
			if err := c.may(rbac.ResourceApplications, rbac.ActionOverride, s.appObject(app)); err != nil {
				return err
			}
		}
		if app.Spec.SyncPolicy.IsAutomatedSyncEnabled() && !dryRun {
			return badRequest(fmt.Sprintf("cannot sync to %s: auto-sync currently set to %s", rev, cmp.Or(sources[i].TargetRevision, "HEAD")))
		}
	}
	return nil
}

// syncApplication starts a sync: it sets the Application's operation,
// which the controller runs, and returns the Application.
func (s *Server) syncApplication(r *http.Request, c *caller) (any, error) {
	var req syncRequest
	return s.startOperation(r, c, rbac.ActionSync, &req, "sync request", func(app *v1alpha1.Application) (*v1alpha1.Operation, string, error) {
		if err := s.checkSyncWindows(r, app); err != nil {
			return nil, "", err
		}
		positions := make([]int64, len(req.SourcePositions))
		for i, p := range req.SourcePositions {
			positions[i] = int64(p)
		}
		revisions, err := sourceRevisions(app, "", req.Revisions, positions, req.SourceNames)
		if err != nil {
			return nil, "", withStatus(http.StatusBadRequest, err)
		}
		asked := revisions
		if len(asked) == 0 {
			asked = []string{req.Revision}
		}
		if err := s.checkRevisions(r.Context(), c, app, asked, req.DryRun); err != nil {
			return nil, "", err
		}
		if err := s.checkLocalSync(c, app, &req); err != nil {
			return nil, "", err
		}
		if s.opts.DisableSyncReplace && slices.Contains(req.SyncOptions.Items, "Replace=true") {
			return nil, "", badRequest("sync with replace was disabled on the API Server level via the server configuration")
		}
		op := &v1alpha1.Operation{
			Sync: &v1alpha1.SyncOperation{Revision: req.Revision, Revisions: revisions, Prune: req.Prune, DryRun: req.DryRun,
				Resources: req.Resources, SyncOptions: req.SyncOptions.Items, SyncStrategy: req.Strategy, Manifests: req.Manifests},
			InitiatedBy: v1alpha1.OperationInitiator{Username: c.claims.Subject},
			Info:        req.Infos,
		}
		if req.Retry != nil {
			op.Retry = *req.Retry
		}
		partial := ""
		if len(req.Resources) > 0 {
			partial = "partial "
		}
		target := ""
		if srcs := app.Spec.GetSources(); len(srcs) > 0 {
			target = srcs[0].TargetRevision
		}
		return op, fmt.Sprintf("initiated %ssync to %s", partial, cmp.Or(req.Revision, target, "HEAD")), nil
	})
}

// deleteApplication deletes an Application; cascade (the default) deletes
// its resources too, through the resources finalizer: foreground
// deletion (the default) or, with propagationPolicy=background, the
// background one, as Argo CD does.
func (s *Server) deleteApplication(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionDelete)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	want := resourcesFinalizer
	switch q.Get("propagationPolicy") {
	case "", "foreground":
	case "background":
		want = resourcesFinalizer + "/background"
	default:
		return nil, badRequest(fmt.Sprintf("propagation policy %q: use foreground or background", q.Get("propagationPolicy")))
	}
	orig := app.DeepCopy()
	app.Finalizers = slices.DeleteFunc(app.Finalizers, func(f string) bool { return strings.HasPrefix(f, resourcesFinalizer) })
	if q.Get("cascade") != "false" {
		app.Finalizers = append(app.Finalizers, want)
	}
	if !slices.Equal(orig.Finalizers, app.Finalizers) {
		if err := s.opts.Client.Patch(r.Context(), app, client.MergeFrom(orig)); err != nil {
			return nil, err
		}
	}
	if err := s.opts.Client.Delete(r.Context(), app); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	s.audit(r.Context(), c, app, reasonDeleted, "deleted application")
	return map[string]string{}, nil
}

// createApplication answers POST /api/v1/applications: it creates the
// Application in the body, returns an existing one with the same spec, and
// replaces a different one only with ?upsert=true (and update permission),
// as Argo CD does.
func (s *Server) createApplication(r *http.Request, c *caller) (any, error) {
	app := &v1alpha1.Application{}
	if err := decode(r, app, "application", false); err != nil {
		return nil, err
	}
	if app.Name == "" {
		return nil, badRequest("application name is required")
	}
	if app.Namespace == "" {
		app.Namespace = s.opts.Namespace
	}
	if app.Spec.Project == "" {
		app.Spec.Project = v1alpha1.DefaultAppProjectName
	}
	if !s.namespaceEnabled(app.Namespace) {
		return nil, withStatus(http.StatusForbidden, errors.New(namespaceNotPermitted(app.Namespace)))
	}
	object := s.appObject(app)
	if !c.can(rbac.ResourceApplications, rbac.ActionCreate, object) {
		return nil, c.forbidden(rbac.ResourceApplications, rbac.ActionCreate, object)
	}
	if err := checkName("application", app.Name); err != nil {
		return nil, err
	}
	proj, err := s.project(r, app)
	if err != nil {
		return nil, err
	}
	// ?validate=false skips only what would reach outside (Argo CD's
	// repository checks, which Capstan leaves to the controller); the
	// project's rules and the spec's own checks always apply.
	if err := s.validateApplication(r.Context(), app, proj); err != nil {
		return nil, err
	}
	app.Status, app.Operation = v1alpha1.ApplicationStatus{}, nil
	app.ResourceVersion, app.UID = "", ""
	err = s.opts.Client.Create(r.Context(), app)
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return nil, err
		}
		s.audit(r.Context(), c, app, reasonCreated, "created application")
		return app, nil
	}
	existing := &v1alpha1.Application{}
	if err := s.opts.Client.Get(r.Context(), client.ObjectKeyFromObject(app), existing); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(existing.Spec, app.Spec) {
		return existing, nil
	}
	if r.URL.Query().Get("upsert") != "true" {
		return nil, badRequest("existing application spec is different, use upsert flag to force update")
	}
	if !c.can(rbac.ResourceApplications, rbac.ActionUpdate, s.appObject(existing)) || !c.can(rbac.ResourceApplications, rbac.ActionUpdate, object) {
		return nil, c.forbidden(rbac.ResourceApplications, rbac.ActionUpdate, object)
	}
	existing.Spec, existing.Labels, existing.Annotations = app.Spec, app.Labels, app.Annotations
	if err := s.opts.Client.Update(r.Context(), existing); err != nil {
		return nil, err
	}
	s.audit(r.Context(), c, existing, reasonUpdated, "updated application")
	return existing, nil
}
