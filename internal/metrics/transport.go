package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Verbs of argocd_app_k8s_request_total, spelled as Argo CD spells them.
const (
	verbGet     = "Get"
	verbList    = "List"
	verbWatch   = "Watch"
	verbCreate  = "Create"
	verbUpdate  = "Update"
	verbPatch   = "Patch"
	verbDelete  = "Delete"
	verbUnknown = "Unknown"
)

type appKey struct{}

// WithApplication returns ctx carrying app, so that the Kubernetes requests
// made with it are counted under app's namespace, name and project.
func WithApplication(ctx context.Context, app *v1alpha1.Application) context.Context {
	return context.WithValue(ctx, appKey{}, app)
}

// WrapTransport returns a wrapper for rest.Config.Wrap that counts every
// request to the cluster at server in argocd_app_k8s_request_total:
//
//   - server: the server argument; the request's scheme and host if empty.
//   - verb: Get, List, Watch, Create, Update, Patch, Delete or Unknown, from
//     the method and whether the path names one object.
//   - resource_kind: the resource of the path, in the plural ("configmaps",
//     "applications"); for a subresource ("…/applications/a/status") the
//     resource it belongs to. "" for paths outside /api and /apis.
//   - resource_namespace: the namespace of the path, "" if cluster-scoped.
//   - response_code: the HTTP status, "0" when no response came.
//   - namespace, name, project and dry_run: from the Application the
//     request's context carries (WithApplication). A transport cannot know
//     it otherwise, so requests without one (informers, discovery) have
//     them empty and dry_run "false". dry_run is the dryRun of the sync in
//     flight: app.operation's, or a Running status.operationState's.
//
// Argo CD's wrapper differs in three details: its server label is always
// the request's scheme and host, it reads a Create's namespace from the
// request body (here: from the path, the same for every well-formed
// request), and for a subresource it reports the object's name as
// resource_kind (here: the resource).
func (m *Metrics) WrapTransport(server string) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return &countingTransport{next: rt, server: server, m: m}
	}
}

// countingTransport is the RoundTripper WrapTransport returns.
type countingTransport struct {
	next   http.RoundTripper
	server string
	m      *Metrics
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	code := 0
	if resp != nil {
		code = resp.StatusCode
	}
	server := t.server
	if server == "" {
		server = req.URL.Scheme + "://" + req.URL.Host
	}
	var ns, name, proj string
	dryRun := false
	if app, _ := req.Context().Value(appKey{}).(*v1alpha1.Application); app != nil {
		ns, name, proj = app.Namespace, app.Name, project(app)
		dryRun = syncInFlightDryRun(app)
	}
	verb, resource, resourceNS := describeRequest(req)
	// A path can decode to invalid UTF-8, which no label may hold: such a
	// request goes uncounted rather than panicking.
	_ = t.m.k8sRequests.Inc(ns, name, proj, server, strconv.Itoa(code),
		verb, resource, resourceNS, strconv.FormatBool(dryRun))
	return resp, err
}

// WrappedRoundTripper lets client-go reach the transport underneath
// (k8s.io/apimachinery/pkg/util/net.RoundTripperWrapper).
func (t *countingTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// syncInFlightDryRun reports whether app's sync in flight is a dry run.
func syncInFlightDryRun(app *v1alpha1.Application) bool {
	if app.Operation != nil && app.Operation.Sync != nil {
		return app.Operation.Sync.DryRun
	}
	st := app.Status.OperationState
	return st != nil && st.Phase == v1alpha1.OperationRunning && st.Operation.Sync != nil && st.Operation.Sync.DryRun
}

// describeRequest reads a Kubernetes API request's verb, resource and
// namespace from its method and path, as the API server's request info
// does: /api/v1 or /apis/GROUP/VERSION (after any prefix of a proxied
// server), an optional "watch", "namespaces/NS", the resource, then the
// name and a subresource. Paths of namespaces themselves
// ("namespaces/NS", "namespaces/NS/status") name the namespace resource.
func describeRequest(req *http.Request) (verb, resource, namespace string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	rest, ok := resourcePath(parts)
	watch := false
	if ok && len(rest) > 0 && rest[0] == "watch" { // deprecated /watch/ paths
		watch, rest = true, rest[1:]
	}
	if ok && len(rest) >= 3 && rest[0] == "namespaces" && rest[2] != "status" && rest[2] != "finalize" {
		namespace, rest = rest[1], rest[2:]
	}
	named := false
	if ok && len(rest) > 0 {
		resource, named = rest[0], len(rest) > 1
	}
	switch req.Method {
	case http.MethodGet:
		if w := req.URL.Query().Get("watch"); watch || w == "true" || w == "1" {
			return verbWatch, resource, namespace
		}
		if named || !ok || resource == "" {
			return verbGet, resource, namespace
		}
		return verbList, resource, namespace
	case http.MethodPost:
		return verbCreate, resource, namespace
	case http.MethodPut:
		return verbUpdate, resource, namespace
	case http.MethodPatch:
		return verbPatch, resource, namespace
	case http.MethodDelete:
		return verbDelete, resource, namespace
	}
	return verbUnknown, resource, namespace
}

// resourcePath returns what follows the API group and version in a path,
// and false for a path outside /api and /apis (version, openapi, healthz).
func resourcePath(parts []string) ([]string, bool) {
	for i, p := range parts {
		switch {
		case p == "api" && i+1 < len(parts) && isVersion(parts[i+1]):
			return parts[i+2:], true
		case p == "apis" && i+2 < len(parts) && isVersion(parts[i+2]):
			return parts[i+3:], true
		}
	}
	return nil, false
}

// isVersion reports whether s looks like an API version: v1, v1beta2.
func isVersion(s string) bool {
	return len(s) >= 2 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9'
}
