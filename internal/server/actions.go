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
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/engine/actions"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// listActions answers GET /api/v1/applications/{name}/resource/actions
// with the actions offered on one object of the app's tree.
func (s *Server) listActions(w http.ResponseWriter, r *http.Request, c *caller) {
	app := s.loadApp(w, r, c, rbac.ActionGet)
	if app == nil {
		return
	}
	list, err := s.state.Actions(r.Context(), app, refFromQuery(r))
	if list == nil {
		list = []actions.Action{}
	}
	s.reply(w, map[string]any{"actions": list}, err)
}

// runAction answers POST /api/v1/applications/{name}/resource/actions/v2
// (the request as a JSON object) and, for older clients,
// /resource/actions (the action's name as the body, the object in the
// query). The caller needs the applications permission
// action/<group>/<kind>/<action>, as in Argo CD.
func (s *Server) runAction(w http.ResponseWriter, r *http.Request, c *caller) {
	app := s.loadApp(w, r, c, rbac.ActionGet)
	if app == nil {
		return
	}
	data, err := io.ReadAll(r.Body) // bounded by limit
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
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
		writeError(w, http.StatusBadRequest, "the body must name the action")
		return
	}
	permission := rbac.ResourceAction(ref.Group, ref.Kind, name)
	if object := s.appObject(app); !c.can(rbac.ResourceApplications, permission, object) {
		c.denied(w, rbac.ResourceApplications, permission, object)
		return
	}
	err = s.state.RunAction(r.Context(), app, ref, name, params)
	var unknown actions.ErrUnknown
	if errors.As(err, &unknown) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.reply(w, map[string]any{}, err)
}

// refFromQuery is the object a resource call's query names.
func refFromQuery(r *http.Request) appstate.ResourceRef {
	q := r.URL.Query()
	return appstate.ResourceRef{Group: q.Get("group"), Version: q.Get("version"), Kind: q.Get("kind"), Namespace: q.Get("namespace"), Name: q.Get("resourceName")}
}

// mayChangeResource reports whether the caller may act (update or delete)
// on an object of the app: on the whole app, or on that object alone
// (action/<group>/<kind>/<namespace>/<name>), as Argo CD's fine-grained
// permissions allow; when not, it answers 403.
func (s *Server) mayChangeResource(w http.ResponseWriter, c *caller, app *v1alpha1.Application, action rbac.Action, ref appstate.ResourceRef) bool {
	object := s.appObject(app)
	fine := action.On(ref.Group, ref.Kind, ref.Namespace, ref.Name)
	if c.can(rbac.ResourceApplications, action, object) || c.can(rbac.ResourceApplications, fine, object) {
		return true
	}
	c.denied(w, rbac.ResourceApplications, fine, object)
	return false
}

// patchTypes are the patches a live object takes.
var patchTypes = map[string]types.PatchType{
	string(types.JSONPatchType): types.JSONPatchType, string(types.MergePatchType): types.MergePatchType,
	string(types.StrategicMergePatchType): types.StrategicMergePatchType,
}

// patchResource answers POST /api/v1/applications/{name}/resource: the
// patch (a JSON string, or the raw patch) applied to an object of the
// app's tree, its patchType in the query; the answer is the object.
func (s *Server) patchResource(w http.ResponseWriter, r *http.Request, c *caller) {
	app := s.loadApp(w, r, c, rbac.ActionGet)
	if app == nil {
		return
	}
	ref := refFromQuery(r)
	if !s.mayChangeResource(w, c, app, rbac.ActionUpdate, ref) {
		return
	}
	pt, ok := patchTypes[r.URL.Query().Get("patchType")]
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("patch type %q: use %s, %s or %s", r.URL.Query().Get("patchType"),
			types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType))
		return
	}
	data, err := io.ReadAll(r.Body) // bounded by limit
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var patch string
	if json.Unmarshal(data, &patch) != nil {
		patch = string(data)
	}
	obj, err := s.state.PatchResource(r.Context(), app, ref, pt, []byte(patch))
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	manifest, err := json.Marshal(obj)
	s.reply(w, map[string]string{"manifest": string(manifest)}, err)
}

// deleteResource answers DELETE /api/v1/applications/{name}/resource:
// an object of the app's tree deleted in the foreground, or orphaning its
// dependents (orphan=true), or at once in the background (force=true).
func (s *Server) deleteResource(w http.ResponseWriter, r *http.Request, c *caller) {
	app := s.loadApp(w, r, c, rbac.ActionGet)
	if app == nil {
		return
	}
	ref := refFromQuery(r)
	if !s.mayChangeResource(w, c, app, rbac.ActionDelete, ref) {
		return
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
	s.reply(w, map[string]any{}, s.state.DeleteResource(r.Context(), app, ref, opts))
}
