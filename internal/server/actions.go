package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/engine/actions"
)

// listActions answers GET /api/v1/applications/{name}/resource/actions
// with the actions offered on one object of the app's tree.
func (s *Server) listActions(w http.ResponseWriter, r *http.Request, c *caller) {
	app := s.loadApp(w, r, c, "get")
	if app == nil {
		return
	}
	list, err := s.state.Actions(r.Context(), app, refFromQuery(r))
	if list == nil {
		list = []actions.Action{}
	}
	s.answer(w, map[string]any{"actions": list}, err)
}

// runAction answers POST /api/v1/applications/{name}/resource/actions/v2
// (the request as a JSON object) and, for older clients,
// /resource/actions (the action's name as the body, the object in the
// query). The caller needs the applications permission
// action/<group>/<kind>/<action>, as in Argo CD.
func (s *Server) runAction(w http.ResponseWriter, r *http.Request, c *caller) {
	app := s.loadApp(w, r, c, "get")
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
	}
	if json.Unmarshal(data, &v2) == nil {
		ref = appstate.ResourceRef{Group: v2.Group, Version: v2.Version, Kind: v2.Kind, Namespace: v2.Namespace, Name: v2.ResourceName}
		name = v2.Action
	} else if json.Unmarshal(data, &name) != nil {
		writeError(w, http.StatusBadRequest, "the body must name the action")
		return
	}
	permission := "action/" + ref.Group + "/" + ref.Kind + "/" + name
	if object := s.appObject(app); !c.can("applications", permission, object) {
		c.denied(w, "applications", permission, object)
		return
	}
	err = s.state.RunAction(r.Context(), app, ref, name)
	var unknown actions.ErrUnknown
	if errors.As(err, &unknown) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.answer(w, map[string]any{}, err)
}

// refFromQuery is the object a resource call's query names.
func refFromQuery(r *http.Request) appstate.ResourceRef {
	q := r.URL.Query()
	return appstate.ResourceRef{Group: q.Get("group"), Version: q.Get("version"), Kind: q.Get("kind"), Namespace: q.Get("namespace"), Name: q.Get("resourceName")}
}
