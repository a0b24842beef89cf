package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/rbac"
	reposvc "github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
)

// rollbackRequest is the body of POST /api/v1/applications/{name}/rollback.
type rollbackRequest struct {
	ID     jsonInt `json:"id"`
	DryRun bool    `json:"dryRun"`
	Prune  bool    `json:"prune"`
}

// rollbackApplication starts a sync to the sources and revisions of a
// history entry. Like Argo CD it refuses while automated sync is on,
// which would undo the rollback at once.
func (s *Server) rollbackApplication(r *http.Request, c *caller) (any, error) {
	var req rollbackRequest
	action, err := s.rollbackAction(r.Context())
	if err != nil {
		return nil, err
	}
	return s.startOperation(r, c, action, &req, "rollback request", func(app *v1alpha1.Application) (*v1alpha1.Operation, string, error) {
		if app.Spec.SyncPolicy.IsAutomatedSyncEnabled() && !req.DryRun {
			return nil, "", badRequest("rollback cannot be initiated when auto-sync is enabled")
		}
		var entry *v1alpha1.RevisionHistory
		for i := range app.Status.History {
			if app.Status.History[i].ID == int64(req.ID) {
				entry = &app.Status.History[i]
			}
		}
		if entry == nil {
			return nil, "", badRequest(fmt.Sprintf("application %s does not have deployment with id %d", app.Name, req.ID))
		}
		op := &v1alpha1.SyncOperation{Revision: entry.Revision, Revisions: entry.Revisions, DryRun: req.DryRun, Prune: req.Prune}
		if len(entry.Sources) > 0 {
			op.Sources = entry.Sources
		} else {
			src := entry.Source
			op.Source = &src
		}
		return &v1alpha1.Operation{Sync: op, InitiatedBy: v1alpha1.OperationInitiator{Username: c.claims.Subject}},
			fmt.Sprintf("initiated rollback to %d", req.ID), nil
	})
}

// startOperation decodes the request body (which may be empty) into req,
// loads the Application (the caller needs the action need on it), lets build make the operation (and the action
// the audit Event names) from it, or say why it cannot start, and sets
// it, which the controller runs; the answer is the Application. An
// operation already in progress is refused; when the Application changed
// meanwhile (the controller wrote its status), the operation is made again
// on the newer copy, as Argo CD's server does, so two callers still cannot
// both start one.
func (s *Server) startOperation(r *http.Request, c *caller, need rbac.Action, req any, what string, build func(*v1alpha1.Application) (*v1alpha1.Operation, string, error)) (any, error) {
	if err := decode(r, req, what, true); err != nil {
		return nil, err
	}
	const attempts = 10
	for attempt := 1; ; attempt++ {
		app, err := s.loadApp(r, c, need)
		if err != nil {
			return nil, err
		}
		if app.Operation != nil {
			return nil, badRequest("another operation is already in progress")
		}
		op, action, err := build(app)
		if err != nil {
			return nil, err
		}
		orig := app.DeepCopy()
		app.Operation = op
		err = s.opts.Client.Patch(r.Context(), app, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) && attempt < attempts {
			// A cached reader catches up with the newer copy in a moment.
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
			continue
		}
		if apierrors.IsConflict(err) {
			return nil, conflict(fmt.Sprintf("application %s kept changing while starting the operation; try again", app.Name))
		}
		if err != nil {
			return nil, err
		}
		s.audit(r.Context(), c, app, reasonOperation, action)
		return app, nil
	}
}

// rollbackAction is the action a rollback needs: rollback when argocd-cm's
// server.rbac.rollback.enforce.enable says so, else sync, as in Argo CD.
func (s *Server) rollbackAction(ctx context.Context) (rbac.Action, error) {
	cm, err := settings.LoadArgoCD(ctx, s.opts.Client, s.opts.Namespace)
	if err != nil {
		return "", err
	}
	if cm.RollbackActionEnforced() {
		return rbac.ActionRollback, nil
	}
	return rbac.ActionSync, nil
}

// terminateOperation answers DELETE /api/v1/applications/{name}/operation:
// the running operation's phase becomes Terminating, and the controller
// stops it.
func (s *Server) terminateOperation(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionSync)
	if err != nil {
		return nil, err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.opts.Client.Get(r.Context(), client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		if app.Operation == nil {
			return errNoOperation
		}
		st := app.Status.OperationState
		if st == nil || st.Phase.Completed() {
			st = &v1alpha1.OperationState{Operation: *app.Operation, StartedAt: metav1.Now()}
		}
		st.Phase, st.Message = v1alpha1.OperationTerminating, "terminating"
		app.Status.OperationState = st
		return s.opts.Client.Update(r.Context(), app)
	})
	switch {
	case errors.Is(err, errNoOperation):
		return nil, withStatus(http.StatusBadRequest, err)
	case err != nil:
		return nil, withStatus(statusOf(err), fmt.Errorf("terminating the operation of application %s: %w", app.Name, err))
	}
	s.audit(r.Context(), c, app, reasonUpdated, "terminated running operation")
	return map[string]string{}, nil
}

var errNoOperation = errors.New("unable to terminate operation. No operation is in progress")

// applicationEvents answers GET /api/v1/applications/{name}/events: the
// Application's own events, or with resourceName those of one of its
// live objects.
func (s *Server) applicationEvents(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	if name := q.Get("resourceName"); name != "" {
		ref := appstate.ResourceRef{Group: q.Get("group"), Kind: q.Get("kind"), Namespace: q.Get("resourceNamespace"), Name: name}
		if ref.Kind == "" {
			ref = s.refByUID(r, app, q.Get("resourceUID"), ref)
		}
		list, err := s.state.Events(r.Context(), app, ref)
		return list, err
	}
	list := &corev1.EventList{}
	err = s.opts.Client.List(r.Context(), list, client.InNamespace(app.Namespace),
		client.MatchingFields{"involvedObject.name": app.Name, "involvedObject.uid": string(app.UID)})
	return list, err
}

// refByUID completes a resource reference given by UID, as Argo CD's UI
// asks for events, from the Application's tree.
func (s *Server) refByUID(r *http.Request, app *v1alpha1.Application, uid string, ref appstate.ResourceRef) appstate.ResourceRef {
	tree, err := s.state.Tree(r.Context(), app)
	if err != nil || uid == "" {
		return ref
	}
	for _, n := range tree.Nodes {
		if n.UID == uid {
			return n.ResourceRef
		}
	}
	return ref
}

// manifestResponse is Argo CD's ManifestResponse.
type manifestResponse struct {
	Manifests  []string `json:"manifests"`
	Namespace  string   `json:"namespace"`
	Server     string   `json:"server"`
	Revision   string   `json:"revision"`
	SourceType string   `json:"sourceType,omitempty"`
}

// manifests answers GET /api/v1/applications/{name}/manifests[?revision=]
// with the rendered objects, each as a JSON string.
func (s *Server) manifests(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	revisions, err := revisionsOf(app, r.URL.Query())
	if err != nil {
		return nil, badRequest(err.Error())
	}
	resp, err := s.state.Manifests(r.Context(), app, revisions)
	if err != nil {
		return nil, err
	}
	return s.manifestAnswer(r.Context(), app, resp)
}

// manifestAnswer is rendered objects as Argo CD's ManifestResponse: each
// object a JSON string, Secrets masked.
func (s *Server) manifestAnswer(ctx context.Context, app *v1alpha1.Application, resp *reposvc.Response) (*manifestResponse, error) {
	out := &manifestResponse{Manifests: []string{}, Namespace: app.Spec.Destination.Namespace, Server: app.Spec.Destination.Server}
	for _, obj := range s.state.Masker(ctx).MaskAll(resp.Objects) {
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out.Manifests = append(out.Manifests, string(data))
	}
	if len(resp.Sources) > 0 {
		out.Revision, out.SourceType = resp.Sources[0].Revision, string(resp.Sources[0].Type)
	}
	return out, nil
}

// revisionsOf reads the revisions a manifests query asks for, by source
// index.
func revisionsOf(app *v1alpha1.Application, q url.Values) ([]string, error) {
	positions := make([]int64, 0, len(q["sourcePositions"]))
	for _, p := range q["sourcePositions"] {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("sourcePositions %q is not a number", p)
		}
		positions = append(positions, n)
	}
	return sourceRevisions(app, q.Get("revision"), q["revisions"], positions, q["sourceNames"])
}

// sourceRevisions places the revisions a request asks for by source
// index: revision for the first (or only) source, or revisions beside the
// sourcePositions (from 1) or sourceNames they are for. Other sources keep
// their targetRevision (an empty entry).
func sourceRevisions(app *v1alpha1.Application, revision string, revisions []string, positions []int64, names []string) ([]string, error) {
	if len(revisions) == 0 {
		if revision == "" {
			return nil, nil
		}
		return []string{revision}, nil
	}
	sources := app.Spec.GetSources()
	if len(positions) != len(revisions) && len(names) != len(revisions) {
		return nil, fmt.Errorf("%d revisions need as many source positions or source names", len(revisions))
	}
	out := make([]string, len(sources))
	for i, rev := range revisions {
		index := -1
		if len(positions) == len(revisions) {
			index = int(positions[i]) - 1
		} else {
			index = slices.IndexFunc(sources, func(s v1alpha1.ApplicationSource) bool { return s.Name == names[i] })
		}
		if index < 0 || index >= len(sources) {
			return nil, fmt.Errorf("application %s has no such source (position %d of %d)", app.Name, index+1, len(sources))
		}
		out[index] = rev
	}
	return out, nil
}

// managedResources answers GET /api/v1/applications/{name}/managed-resources,
// optionally narrowed to one object by group, kind, namespace and name.
func (s *Server) managedResources(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	diffs, err := s.state.ManagedResources(r.Context(), app)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	items := []appstate.ResourceDiff{}
	for _, d := range diffs {
		if (q.Has("group") && q.Get("group") != d.Group) || (q.Get("kind") != "" && q.Get("kind") != d.Kind) ||
			(q.Has("namespace") && q.Get("namespace") != d.Namespace) || (q.Get("name") != "" && q.Get("name") != d.Name) {
			continue
		}
		items = append(items, d)
	}
	return map[string]any{"items": items}, nil
}

// resourceTree answers GET /api/v1/applications/{name}/resource-tree.
func (s *Server) resourceTree(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	tree, err := s.state.Tree(r.Context(), app)
	return tree, err
}

// liveResource answers GET /api/v1/applications/{name}/resource with one
// live object of the Application's tree, as a JSON string.
func (s *Server) liveResource(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	obj, err := s.state.Live(r.Context(), app, refFromQuery(r))
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return apiwire.ResourceManifest{Manifest: string(data)}, nil
}
