package server

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
)

// maxDiffTargets bounds the manifests one server-side diff compares.
const maxDiffTargets = 10000

// serverSideDiff answers GET /api/v1/applications/{appName}/server-side-diff:
// the app's managed resources compared, through the same server-side dry
// run as its sync, with the targetManifests given (rendered by the caller
// from another revision or a local directory) instead of its sources. As
// the manifests can be large, the query may also come as the JSON body of
// a POST, which Capstan's CLI sends.
func (s *Server) serverSideDiff(w http.ResponseWriter, r *http.Request, c *caller) {
	r.SetPathValue("name", r.PathValue("appName"))
	var q struct {
		AppNamespace    string   `json:"appNamespace"`
		TargetManifests []string `json:"targetManifests"`
	}
	if r.Method == http.MethodPost {
		if !decodeBody(w, r, &q, "server-side diff query", false) {
			return
		}
		if q.AppNamespace != "" {
			query := r.URL.Query()
			query.Set("appNamespace", q.AppNamespace)
			r.URL.RawQuery = query.Encode()
		}
	} else {
		q.TargetManifests = r.URL.Query()["targetManifests"]
	}
	if len(q.TargetManifests) > maxDiffTargets {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%d target manifests: at most %d are compared at once", len(q.TargetManifests), maxDiffTargets))
		return
	}
	app := s.loadApp(w, r, c, rbac.ActionGet)
	if app == nil {
		return
	}
	var desired []*unstructured.Unstructured
	for i, doc := range q.TargetManifests {
		objs, err := manifest.Parse(fmt.Sprintf("targetManifests[%d]", i), []byte(doc))
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		desired = append(desired, objs...)
	}
	diffs, err := s.state.DiffWith(r.Context(), app, desired)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	modified := false
	for _, d := range diffs {
		modified = modified || d.Modified
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": diffs, "modified": modified})
}
