package server

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// uiRoutes registers the web UI: its list of applications and its pages.
func (s *Server) uiRoutes() {
	s.mux.HandleFunc("GET /api/v1/ui/applications", s.api(s.uiApplications))
	s.mux.HandleFunc("/", s.webUI)
}

// The web UI's application list, GET /api/v1/ui/applications: one page of
// short summaries, filtered and counted by the server, so a browser never
// downloads every Application (Argo CD's UI does, and waits minutes at a
// few thousand apps). The query keeps the UI's filters as its URL does:
//
//	search     a part of the name
//	name       exact names (the user's favourites), repeatable
//	project, sync, health, cluster, namespace, repo, targetRevision,
//	autoSync (Enabled, Disabled), operation (its phase, or None)
//	           each repeatable; any value matches
//	selector   a label selector
//	annotation key or key=value, repeatable; all must match
//	offset, limit   the page (limit 100 by default, 500 at most)
//
// Counts by sync and health status are over the apps every other filter
// keeps, so each count says what choosing that status would show; the
// other counts (autoSync, operation, clusters, namespaces) are over the
// apps shown, for the summary view. Facets list the values the filters
// can take among the apps the user may see.

// Bounds of a page.
const (
	uiDefaultLimit = 100
	uiMaxLimit     = 500
)

// appSummary is what the list shows of one Application.
type appSummary struct {
	Name           string            `json:"name"`
	Namespace      string            `json:"namespace"`
	Project        string            `json:"project"`
	Labels         map[string]string `json:"labels,omitempty"`
	Repo           string            `json:"repo"`
	Path           string            `json:"path,omitempty"`
	Chart          string            `json:"chart,omitempty"`
	TargetRevision string            `json:"targetRevision,omitempty"`
	Cluster        string            `json:"cluster"`
	DestNamespace  string            `json:"destNamespace,omitempty"`
	Sync           string            `json:"sync"`
	Health         string            `json:"health"`
	Revision       string            `json:"revision,omitempty"`
	Operation      string            `json:"operation,omitempty"`
	AutoSync       bool              `json:"autoSync,omitempty"`

	annotations map[string]string
}

// appPage is the answer.
type appPage struct {
	ResourceVersion string                    `json:"resourceVersion"`
	Total           int                       `json:"total"`
	Offset          int                       `json:"offset"`
	Counts          map[string]map[string]int `json:"counts"`
	Facets          map[string][]string       `json:"facets"`
	Items           []appSummary              `json:"items"`
}

func summarize(app *v1alpha1.Application) appSummary {
	s := appSummary{
		Name: app.Name, Namespace: app.Namespace, Project: app.Spec.Project, Labels: app.Labels,
		Cluster: cmp.Or(app.Spec.Destination.Server, app.Spec.Destination.Name), DestNamespace: app.Spec.Destination.Namespace,
		Sync: cmp.Or(string(app.Status.Sync.Status), "Unknown"), Health: cmp.Or(string(app.Status.Health.Status), "Unknown"),
		Revision:    app.Status.Sync.Revision,
		AutoSync:    app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Automated != nil,
		annotations: app.Annotations,
	}
	if sources := app.Spec.GetSources(); len(sources) > 0 {
		s.Repo, s.Path, s.Chart, s.TargetRevision = sources[0].RepoURL, sources[0].Path, sources[0].Chart, sources[0].TargetRevision
	}
	if op := app.Status.OperationState; op != nil {
		s.Operation = string(op.Phase)
	}
	return s
}

// uiFilter is the query's filters.
type uiFilter struct {
	search                                string
	names                                 []string
	projects, clusters, namespaces, repos []string
	revisions, autoSyncs, operations      []string
	annotations                           []string
	syncs, healths                        []string
	offset, limit                         int
}

func parseUIFilter(r *http.Request) (uiFilter, error) {
	q := r.URL.Query()
	f := uiFilter{
		search: strings.ToLower(strings.TrimSpace(q.Get("search"))), projects: q["project"], clusters: q["cluster"],
		namespaces: q["namespace"], repos: q["repo"], syncs: q["sync"], healths: q["health"], limit: uiDefaultLimit,
		names: q["name"], revisions: q["targetRevision"], autoSyncs: q["autoSync"], operations: q["operation"], annotations: q["annotation"],
	}
	for name, dst := range map[string]*int{"offset": &f.offset, "limit": &f.limit} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, fmt.Errorf("invalid %s %q: want a number from 0", name, v)
		}
		*dst = n
	}
	f.limit = min(max(f.limit, 1), uiMaxLimit)
	return f, nil
}

func anyOf(want []string, v string) bool { return len(want) == 0 || slices.Contains(want, v) }

// keeps tells whether s passes every filter but the status ones.
func (f uiFilter) keeps(s appSummary) bool {
	return (f.search == "" || strings.Contains(strings.ToLower(s.Name), f.search)) && anyOf(f.names, s.Name) &&
		anyOf(f.projects, s.Project) && anyOf(f.clusters, s.Cluster) &&
		anyOf(f.namespaces, s.DestNamespace) && anyOf(f.repos, s.Repo) && anyOf(f.revisions, cmp.Or(s.TargetRevision, "HEAD")) &&
		anyOf(f.autoSyncs, s.autoSyncWord()) && anyOf(f.operations, cmp.Or(s.Operation, "None")) && hasAnnotations(s.annotations, f.annotations)
}

// autoSyncWord is the summary's automated sync as the filter names it.
func (s appSummary) autoSyncWord() string {
	if s.AutoSync {
		return "Enabled"
	}
	return "Disabled"
}

// hasAnnotations tells whether annotations hold every "key" or
// "key=value" of want.
func hasAnnotations(annotations map[string]string, want []string) bool {
	for _, w := range want {
		k, v, withValue := strings.Cut(w, "=")
		got, ok := annotations[k]
		if !ok || (withValue && got != v) {
			return false
		}
	}
	return true
}

func (s *Server) uiApplications(r *http.Request, c *caller) (any, error) {
	f, err := parseUIFilter(r)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	selector, err := parseSelector(r.URL.Query().Get("selector"))
	if err != nil {
		return nil, badRequest(err.Error())
	}
	apps, version, err := s.readApps(r.Context(), s.opts.Namespace, selector)
	if err != nil {
		return nil, err
	}
	page := appPage{ResourceVersion: version, Offset: f.offset, Items: []appSummary{},
		Counts: map[string]map[string]int{"sync": {}, "health": {}, "autoSync": {}, "operation": {}, "clusters": {}, "namespaces": {}}}
	facets := map[string]map[string]bool{"projects": {}, "clusters": {}, "namespaces": {}, "repos": {}, "targetRevisions": {}}
	var matched []appSummary
	for _, app := range apps {
		if !c.can(rbac.ResourceApplications, rbac.ActionGet, s.appObject(app)) {
			continue
		}
		sum := summarize(app)
		facets["projects"][sum.Project], facets["clusters"][sum.Cluster] = true, true
		facets["namespaces"][sum.DestNamespace], facets["repos"][sum.Repo] = true, true
		facets["targetRevisions"][cmp.Or(sum.TargetRevision, "HEAD")] = true
		if !f.keeps(sum) {
			continue
		}
		if anyOf(f.healths, sum.Health) {
			page.Counts["sync"][sum.Sync]++
		}
		if anyOf(f.syncs, sum.Sync) {
			page.Counts["health"][sum.Health]++
		}
		if anyOf(f.syncs, sum.Sync) && anyOf(f.healths, sum.Health) {
			matched = append(matched, sum)
			page.count(sum)
		}
	}
	slices.SortFunc(matched, func(a, b appSummary) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Namespace, b.Namespace))
	})
	page.Total = len(matched)
	if f.offset < len(matched) {
		page.Items = matched[f.offset:min(f.offset+f.limit, len(matched))]
	}
	page.Facets = map[string][]string{}
	for name, values := range facets {
		delete(values, "")
		page.Facets[name] = append([]string{}, slices.Sorted(maps.Keys(values))...)
	}
	return page, nil
}

// count adds a shown app to the summary view's counts.
func (p *appPage) count(s appSummary) {
	p.Counts["autoSync"][s.autoSyncWord()]++
	p.Counts["operation"][cmp.Or(s.Operation, "None")]++
	p.Counts["clusters"][s.Cluster]++
	p.Counts["namespaces"][s.DestNamespace]++
}

// apiPrefixes are paths the web UI never answers: an unknown API path is
// the API's 404, not the UI's page.
var apiPrefixes = []string{"/api/", "/auth/", "/swagger", "/metrics", "/healthz"}

// webUI serves the web UI's page and assets for every other GET.
func (s *Server) webUI(w http.ResponseWriter, r *http.Request) {
	for _, p := range apiPrefixes {
		if strings.HasPrefix(r.URL.Path, p) {
			writeError(w, http.StatusNotFound, "Not Found")
			return
		}
	}
	if s.ui == nil {
		http.NotFound(w, r)
		return
	}
	s.ui.ServeHTTP(w, r)
}
