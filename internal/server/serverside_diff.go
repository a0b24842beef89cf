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
func (s *Server) serverSideDiff(r *http.Request, c *caller) (any, error) {
	r.SetPathValue("name", r.PathValue("appName"))
	var q struct {
		AppNamespace    string   `json:"appNamespace"`
		TargetManifests []string `json:"targetManifests"`
	}
	if r.Method == http.MethodPost {
		if err := decode(r, &q, "server-side diff query", false); err != nil {
			return nil, err
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
		return nil, badRequest(fmt.Sprintf("%d target manifests: at most %d are compared at once", len(q.TargetManifests), maxDiffTargets))
	}
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	var desired []*unstructured.Unstructured
	for i, doc := range q.TargetManifests {
		objs, err := manifest.Parse(fmt.Sprintf("targetManifests[%d]", i), []byte(doc))
		if err != nil {
			return nil, badRequest(err.Error())
		}
		desired = append(desired, objs...)
	}
	diffs, err := s.state.DiffWith(r.Context(), app, desired)
	if err != nil {
		return nil, err
	}
	modified := false
	for _, d := range diffs {
		modified = modified || d.Modified
	}
	return map[string]any{"items": diffs, "modified": modified}, nil
}
