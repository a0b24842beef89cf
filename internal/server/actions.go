package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/engine/actions"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// listActions answers GET /api/v1/applications/{name}/resource/actions
// with the actions offered on one object of the app's tree.
func (s *Server) listActions(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	var list []actions.Action
	if ref := refFromQuery(r); isAppItself(app, ref) {
		list, err = s.appActions(r.Context(), app)
	} else {
		list, err = s.state.Actions(r.Context(), app, ref)
	}
	if list == nil {
		list = []actions.Action{}
	}
	return map[string]any{"actions": list}, err
}

// runAction answers POST /api/v1/applications/{name}/resource/actions/v2
// (the request as a JSON object) and, for older clients,
// /resource/actions (the action's name as the body, the object in the
// query). The caller needs the applications permission
// action/<group>/<kind>/<action>, as in Argo CD.
func (s *Server) runAction(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r.Body) // bounded by limit
	if err != nil {
		return nil, badRequest(err.Error())
	}
	ref, name := refFromQuery(r), ""
	var v2 struct {
		Namespace    string `json:"namespace"`
		ResourceName string `json:"resourceName"`
		Version      string `json:"version"`
		Group        string `json:"group"`
		Kind         string `json:"kind"`
		Action       string `json:"action"`
		Parameters   []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"resourceActionParameters"`
	}
	params := map[string]string{}
	if json.Unmarshal(data, &v2) == nil {
		ref = appstate.ResourceRef{Group: v2.Group, Version: v2.Version, Kind: v2.Kind, Namespace: v2.Namespace, Name: v2.ResourceName}
		name = v2.Action
		for _, p := range v2.Parameters {
			params[p.Name] = p.Value
		}
	} else if json.Unmarshal(data, &name) != nil {
		return nil, badRequest("the body must name the action")
	}
	permission := rbac.ResourceAction(ref.Group, ref.Kind, name)
	if object := s.appObject(app); !c.can(rbac.ResourceApplications, permission, object) {
		return nil, c.forbidden(rbac.ResourceApplications, permission, object)
	}
	if isAppItself(app, ref) {
		err = s.runAppAction(r.Context(), c, app, name, params)
	} else {
		err = s.state.RunAction(r.Context(), app, ref, name, params)
		if err == nil {
			s.audit(r.Context(), c, app, reasonActionRan, fmt.Sprintf("ran action %s on resource %s/%s/%s", name, ref.Group, ref.Kind, ref.Name))
		}
	}
	var unknown actions.ErrUnknown
	if errors.As(err, &unknown) {
		return nil, badRequest(err.Error())
	}
	return map[string]any{}, err
}

// refFromQuery is the object a resource call's query names.
func refFromQuery(r *http.Request) appstate.ResourceRef {
	q := r.URL.Query()
	return appstate.ResourceRef{Group: q.Get("group"), Version: q.Get("version"), Kind: q.Get("kind"), Namespace: q.Get("namespace"), Name: q.Get("resourceName")}
}

// mayChangeResource reports whether the caller may act (update or delete)
// on an object of the app: on the whole app, or on that object alone
// (action/<group>/<kind>/<namespace>/<name>), as Argo CD's fine-grained
// permissions allow; when not, the error is 403.
func (s *Server) mayChangeResource(c *caller, app *v1alpha1.Application, action rbac.Action, ref appstate.ResourceRef) error {
	object := s.appObject(app)
	fine := action.On(ref.Group, ref.Kind, ref.Namespace, ref.Name)
	if c.can(rbac.ResourceApplications, action, object) || c.can(rbac.ResourceApplications, fine, object) {
		return nil
	}
	return c.forbidden(rbac.ResourceApplications, fine, object)
}

// patchTypes are the patches a live object takes.
var patchTypes = map[string]types.PatchType{
	string(types.JSONPatchType): types.JSONPatchType, string(types.MergePatchType): types.MergePatchType,
	string(types.StrategicMergePatchType): types.StrategicMergePatchType,
}

// patchResource answers POST /api/v1/applications/{name}/resource: the
// patch (a JSON string, or the raw patch) applied to an object of the
// app's tree, its patchType in the query; the answer is the object.
func (s *Server) patchResource(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	ref := refFromQuery(r)
	if err := s.mayChangeResource(c, app, rbac.ActionUpdate, ref); err != nil {
		return nil, err
	}
	pt, ok := patchTypes[r.URL.Query().Get("patchType")]
	if !ok {
		return nil, badRequest(fmt.Sprintf("patch type %q: use %s, %s or %s", r.URL.Query().Get("patchType"),
			types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType))
	}
	data, err := io.ReadAll(r.Body) // bounded by limit
	if err != nil {
		return nil, badRequest(err.Error())
	}
	var patch string
	if json.Unmarshal(data, &patch) != nil {
		patch = string(data)
	}
	obj, err := s.state.PatchResource(r.Context(), app, ref, pt, []byte(patch))
	if err != nil {
		return nil, err
	}
	manifest, err := json.Marshal(obj)
	return apiwire.ResourceManifest{Manifest: string(manifest)}, err
}

// deleteResource answers DELETE /api/v1/applications/{name}/resource:
// an object of the app's tree deleted in the foreground, or orphaning its
// dependents (orphan=true), or at once in the background (force=true).
func (s *Server) deleteResource(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	ref := refFromQuery(r)
	if err := s.mayChangeResource(c, app, rbac.ActionDelete, ref); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	policy := metav1.DeletePropagationForeground
	opts := metav1.DeleteOptions{PropagationPolicy: &policy}
	switch {
	case q.Get("orphan") == "true":
		policy = metav1.DeletePropagationOrphan
	case q.Get("force") == "true":
		policy = metav1.DeletePropagationBackground
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	return map[string]any{}, s.state.DeleteResource(r.Context(), app, ref, opts)
}
