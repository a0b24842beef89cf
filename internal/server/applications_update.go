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
func (s *Server) updateApplication(r *http.Request, c *caller) (any, error) {
	in := &v1alpha1.Application{}
	if err := decode(r, in, "application", false); err != nil {
		return nil, err
	}
	if in.Name != "" && in.Name != r.PathValue("name") {
		return nil, badRequest(fmt.Sprintf("application name %q does not match the path's %q", in.Name, r.PathValue("name")))
	}
	return s.replaceApplication(r, c, "updated application", func(app *v1alpha1.Application) {
		app.Spec, app.Labels, app.Annotations, app.Finalizers = in.Spec, in.Labels, in.Annotations, in.Finalizers
	}, func(app *v1alpha1.Application) any { return app })
}

// updateApplicationSpec answers PUT /api/v1/applications/{name}/spec.
func (s *Server) updateApplicationSpec(r *http.Request, c *caller) (any, error) {
	spec := v1alpha1.ApplicationSpec{}
	if err := decode(r, &spec, "application spec", false); err != nil {
		return nil, err
	}
	return s.replaceApplication(r, c, "updated application spec", func(app *v1alpha1.Application) { app.Spec = spec },
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
func (s *Server) patchApplication(r *http.Request, c *caller) (any, error) {
	var req patchRequest
	if err := decode(r, &req, "patch request", false); err != nil {
		return nil, err
	}
	var apply func(doc []byte) ([]byte, error)
	switch req.PatchType {
	case "", "merge":
		apply = func(doc []byte) ([]byte, error) { return jsonpatch.MergePatch(doc, []byte(req.Patch)) }
	case "json":
		p, err := jsonpatch.DecodePatch([]byte(req.Patch))
		if err != nil {
			return nil, badRequest("invalid JSON patch: " + err.Error())
		}
		apply = p.Apply
	default:
		return nil, badRequest(fmt.Sprintf("patch type %q is not supported; use merge or json", req.PatchType))
	}
	var patchErr error
	return s.replaceApplication(r, c, "patched application", func(app *v1alpha1.Application) {
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
// that the new project exists), and stores it. answer picks what is
// answered; an error it returns is a bad request and nothing is stored.
// When the controller wrote the Application meanwhile, the change is made
// again on the newer copy, as Argo CD's server does. action is what the
// audit Event says was done.
func (s *Server) replaceApplication(r *http.Request, c *caller, action string, edit func(*v1alpha1.Application), answer func(*v1alpha1.Application) any) (any, error) {
	const attempts = 10
	for attempt := 1; ; attempt++ {
		app, err := s.editedApplication(r, c, edit, answer)
		if err != nil {
			return nil, err
		}
		err = s.opts.Client.Update(r.Context(), app)
		if apierrors.IsConflict(err) && attempt < attempts {
			// A cached reader catches up with the newer copy in a moment.
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
			continue
		}
		if err != nil {
			return nil, withStatus(statusOf(err), fmt.Errorf("updating application %s: %w", app.Name, err))
		}
		s.audit(r.Context(), c, app, reasonUpdated, action)
		return answer(app), nil
	}
}

// editedApplication loads and changes the Application for
// replaceApplication and checks the result, or says why not.
func (s *Server) editedApplication(r *http.Request, c *caller, edit func(*v1alpha1.Application), answer func(*v1alpha1.Application) any) (*v1alpha1.Application, error) {
	app, err := s.loadApp(r, c, rbac.ActionUpdate)
	if err != nil {
		return nil, err
	}
	edit(app)
	if err, ok := answer(app).(error); ok {
		return nil, badRequest("applying the patch: " + err.Error())
	}
	if app.Spec.Project == "" {
		app.Spec.Project = v1alpha1.DefaultAppProjectName
	}
	if err := c.may(rbac.ResourceApplications, rbac.ActionUpdate, s.appObject(app)); err != nil {
		return nil, err
	}
	// As on create, ?validate=false never skips the project's rules.
	proj, err := s.project(r, app)
	if err != nil {
		return nil, err
	}
	if err := s.validateApplication(r.Context(), app, proj); err != nil {
		return nil, err
	}
	return app, nil
}

// project returns the Application's AppProject; 400 when it does not
// exist or does not accept the Application's namespace.
func (s *Server) project(r *http.Request, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	name := cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName)
	proj, err := project.Load(r.Context(), s.opts.Client, s.opts.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, badRequest(fmt.Sprintf("application references project %s which does not exist", name))
	case err != nil:
		return nil, err
	}
	if !s.projectAcceptsNamespace(proj, app) {
		return nil, badRequest(appNotAllowedInProject(app))
	}
	return proj, nil
}
