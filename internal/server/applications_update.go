package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// updateApplication answers PUT /api/v1/applications/{name}: the body's
// spec, labels, annotations and finalizers replace the stored ones.
func (s *Server) updateApplication(w http.ResponseWriter, r *http.Request, c *caller) {
	in := &v1alpha1.Application{}
	if !decodeBody(w, r, in, "application", false) {
		return
	}
	if in.Name != "" && in.Name != r.PathValue("name") {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("application name %q does not match the path's %q", in.Name, r.PathValue("name")))
		return
	}
	s.replaceApplication(w, r, c, "updated application", func(app *v1alpha1.Application) {
		app.Spec, app.Labels, app.Annotations, app.Finalizers = in.Spec, in.Labels, in.Annotations, in.Finalizers
	}, func(app *v1alpha1.Application) any { return app })
}

// updateApplicationSpec answers PUT /api/v1/applications/{name}/spec.
func (s *Server) updateApplicationSpec(w http.ResponseWriter, r *http.Request, c *caller) {
	spec := v1alpha1.ApplicationSpec{}
	if !decodeBody(w, r, &spec, "application spec", false) {
		return
	}
	s.replaceApplication(w, r, c, "updated application spec", func(app *v1alpha1.Application) { app.Spec = spec },
		func(app *v1alpha1.Application) any { return app.Spec })
}

// patchRequest is the body of PATCH /api/v1/applications/{name}.
type patchRequest struct {
	Patch string `json:"patch"`
	// PatchType is "merge" (the default) or "json".
	PatchType string `json:"patchType"`
}

// patchApplication answers PATCH /api/v1/applications/{name} with a JSON
// merge patch or a JSON patch, applied to the stored Application.
func (s *Server) patchApplication(w http.ResponseWriter, r *http.Request, c *caller) {
	var req patchRequest
	if !decodeBody(w, r, &req, "patch request", false) {
		return
	}
	var apply func(doc []byte) ([]byte, error)
	switch req.PatchType {
	case "", "merge":
		apply = func(doc []byte) ([]byte, error) { return jsonpatch.MergePatch(doc, []byte(req.Patch)) }
	case "json":
		p, err := jsonpatch.DecodePatch([]byte(req.Patch))
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid JSON patch: "+err.Error())
			return
		}
		apply = p.Apply
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("patch type %q is not supported; use merge or json", req.PatchType))
		return
	}
	var patchErr error
	s.replaceApplication(w, r, c, "patched application", func(app *v1alpha1.Application) {
		doc, err := json.Marshal(app)
		if err == nil {
			doc, err = apply(doc)
		}
		patched := &v1alpha1.Application{}
		if err == nil {
			err = json.Unmarshal(doc, patched)
		}
		if err != nil {
			patchErr = err
			return
		}
		// Only what an update may change: never .operation (a sync needs
		// its own permission) nor .status, as Argo CD's patch.
		app.Spec, app.Labels, app.Annotations, app.Finalizers = patched.Spec, patched.Labels, patched.Annotations, patched.Finalizers
	}, func(app *v1alpha1.Application) any {
		if patchErr != nil {
			return patchErr
		}
		return app
	})
}

// replaceApplication loads the named Application, changes it with edit,
// checks the caller may update it in its old and its new project (and
// that the new project exists), and stores it. reply picks what is
// answered; an error it returns is a bad request and nothing is stored.
// When the controller wrote the Application meanwhile, the change is made
// again on the newer copy, as Argo CD's server does. action is what the
// audit Event says was done.
func (s *Server) replaceApplication(w http.ResponseWriter, r *http.Request, c *caller, action string, edit func(*v1alpha1.Application), reply func(*v1alpha1.Application) any) {
	const attempts = 10
	for attempt := 1; ; attempt++ {
		app := s.editedApplication(w, r, c, edit, reply)
		if app == nil {
			return
		}
		err := s.opts.Client.Update(r.Context(), app)
		if apierrors.IsConflict(err) && attempt < attempts {
			// A cached reader catches up with the newer copy in a moment.
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
			continue
		}
		if err != nil {
			writeError(w, statusOf(err), fmt.Sprintf("updating application %s: %v", app.Name, err))
			return
		}
		s.audit(r.Context(), c, app, reasonUpdated, action)
		writeJSON(w, http.StatusOK, reply(app))
		return
	}
}

// editedApplication loads and changes the Application for
// replaceApplication and checks the result, or writes why not and
// returns nil.
func (s *Server) editedApplication(w http.ResponseWriter, r *http.Request, c *caller, edit func(*v1alpha1.Application), reply func(*v1alpha1.Application) any) *v1alpha1.Application {
	app := s.loadApp(w, r, c, rbac.ActionUpdate)
	if app == nil {
		return nil
	}
	edit(app)
	if err, ok := reply(app).(error); ok {
		writeError(w, http.StatusBadRequest, "applying the patch: "+err.Error())
		return nil
	}
	if app.Spec.Project == "" {
		app.Spec.Project = v1alpha1.DefaultAppProjectName
	}
	if object := s.appObject(app); !c.can(rbac.ResourceApplications, rbac.ActionUpdate, object) {
		c.denied(w, rbac.ResourceApplications, rbac.ActionUpdate, object)
		return nil
	}
	// As on create, ?validate=false never skips the project's rules.
	proj := s.project(w, r, app)
	if proj == nil {
		return nil
	}
	if err := s.validateApplication(r.Context(), app, proj); err != nil {
		writeError(w, statusOf(err), err.Error())
		return nil
	}
	return app
}

// project returns the Application's AppProject, or writes 400 when it
// does not exist (and 500 when it cannot be read) and returns nil.
func (s *Server) project(w http.ResponseWriter, r *http.Request, app *v1alpha1.Application) *v1alpha1.AppProject {
	name := cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName)
	proj, err := project.Load(r.Context(), s.opts.Client, s.opts.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("application references project %s which does not exist", name))
		return nil
	case err != nil:
		s.reply(w, nil, err)
		return nil
	}
	if !s.projectAcceptsNamespace(proj, app) {
		writeError(w, http.StatusBadRequest, appNotAllowedInProject(app))
		return nil
	}
	return proj
}
