package server

import (
	"cmp"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/settings"
)

// The status badge, GET /api/badge: an SVG image of an Application's (or
// a project's apps') health and sync status, for READMEs and dashboards.
// It needs no login, so it shows real statuses only when argocd-cm's
// statusbadge.enabled is "true"; otherwise every badge reads Unknown.

// badgeColors are the badge's colours by status, as Argo CD's.
var badgeColors = map[string]string{
	string(v1alpha1.HealthStatusProgressing): "#103d66",
	string(v1alpha1.HealthStatusHealthy):     "#0b612a",
	string(v1alpha1.SyncStatusCodeSynced):    "#0b612a",
	string(v1alpha1.HealthStatusMissing):     "#731f4d",
	"Unknown":                                "#731f4d",
	string(v1alpha1.SyncStatusCodeOutOfSync): "#bd7300",
	string(v1alpha1.HealthStatusDegraded):    "#a72e26",
}

// badgeGrey colours any other status (Suspended, say).
const badgeGrey = "#29343d"

// Badge widths: the two statuses, with a short revision, with a full one.
const (
	badgeWidth             = 131
	badgeLeftWidth         = 77
	badgeRevisionWidth     = 192
	badgeFullRevisionWidth = 400
)

// badge is what one badge shows.
type badge struct {
	left, right string // health and sync, or "Not Found" and ""
	revision    string
	title       string // the app's name, when asked for
	width       int
}

func (s *Server) badge(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	b := badge{left: "Unknown", right: "Unknown", width: badgeWidth}
	ns := cmp.Or(q.Get("namespace"), s.opts.Namespace)
	if len(validation.IsDNS1123Label(ns)) > 0 || (q.Has("name") && len(validation.IsDNS1123Subdomain(q.Get("name"))) > 0) {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, p := range q["project"] {
		if p != "" && len(validation.IsDNS1123Label(strings.ToLower(p))) > 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
	}
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err == nil && cm.StatusBadgeEnabled() {
		s.fillBadge(r, &b, ns)
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, b.svg())
}

// fillBadge reads the named app, or aggregates the apps of the projects.
func (s *Server) fillBadge(r *http.Request, b *badge, ns string) {
	q := r.URL.Query()
	if name := q.Get("name"); name != "" {
		app := &v1alpha1.Application{}
		err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, app)
		if err != nil || !s.badgeVisible(r, app) {
			b.left, b.right = "Not Found", ""
			return
		}
		b.left, b.right = cmp.Or(string(app.Status.Health.Status), "Unknown"), cmp.Or(string(app.Status.Sync.Status), "Unknown")
		b.revision = app.Status.Sync.Revision
		if st := app.Status.OperationState; st != nil && st.SyncResult != nil {
			if revs := st.SyncResult.Revisions; len(revs) > 0 {
				b.revision = revs[0]
			} else {
				b.revision = cmp.Or(st.SyncResult.Revision, b.revision)
			}
		}
		if q.Get("showAppName") == "true" {
			b.title = app.Name
		}
	}
	if projects := q["project"]; len(projects) > 0 {
		var apps v1alpha1.ApplicationList
		if err := s.opts.Client.List(r.Context(), &apps, client.InNamespace(ns)); err == nil {
			b.aggregate(apps.Items, projects)
		}
	}
	if strings.EqualFold(q.Get("revision"), "true") && b.revision != "" {
		b.width = badgeRevisionWidth
		if q.Get("keepFullRevision") == "true" || len(b.revision) <= 7 {
			b.width = badgeFullRevisionWidth
		} else {
			b.revision = b.revision[:7]
		}
	} else {
		b.revision = ""
	}
	if width, err := strconv.Atoi(q.Get("width")); err == nil && width > badgeLeftWidth && width <= 4096 {
		b.width = width
	}
}

// badgeVisible reports whether an app's badge may be shown: one the API
// serves (see appNamespaceAllowed).
func (s *Server) badgeVisible(r *http.Request, app *v1alpha1.Application) bool {
	return s.appNamespaceAllowed(r.Context(), app)
}

// aggregate shows the apps of the projects together: OutOfSync when any
// is, Degraded when any is not Healthy, Unknown when there are none.
func (b *badge) aggregate(apps []v1alpha1.Application, projects []string) {
	found := false
	b.left, b.right = string(v1alpha1.HealthStatusHealthy), string(v1alpha1.SyncStatusCodeSynced)
	for _, app := range apps {
		if !project.MatchesAny(projects, app.Spec.Project, false) {
			continue
		}
		found = true
		if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
			b.right = string(v1alpha1.SyncStatusCodeOutOfSync)
		}
		if app.Status.Health.Status != v1alpha1.HealthStatusHealthy {
			b.left = string(v1alpha1.HealthStatusDegraded)
		}
	}
	if !found {
		b.left, b.right = "Unknown", "Unknown"
	}
}

func badgeColor(status string) string { return cmp.Or(badgeColors[status], badgeGrey) }

// svg draws the badge: health on the left, sync on the right, the
// revision after them, and the app's name in a row above when asked.
func (b badge) svg() string {
	height, top := 20, 0
	if b.title != "" {
		height, top = 40, 20
	}
	syncColor := badgeColor(b.right)
	if b.left == "Not Found" {
		syncColor = badgeColor("Unknown")
	}
	statusEnd := b.width
	if b.revision != "" {
		statusEnd = badgeWidth
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">`, b.width, height, html.EscapeString(b.label()))
	fmt.Fprintf(&sb, `<title>%s</title>`, html.EscapeString(b.label()))
	fmt.Fprintf(&sb, `<clipPath id="round"><rect width="%d" height="%d" rx="3"/></clipPath><g clip-path="url(#round)">`, b.width, height)
	if b.title != "" {
		fmt.Fprintf(&sb, `<rect width="%d" height="20" fill="%s"/>`, b.width, badgeGrey)
	}
	fmt.Fprintf(&sb, `<rect y="%d" width="%d" height="20" fill="%s"/>`, top, badgeLeftWidth, badgeColor(b.left))
	fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%d" height="20" fill="%s"/>`, badgeLeftWidth, top, statusEnd-badgeLeftWidth, syncColor)
	if b.revision != "" {
		fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%d" height="20" fill="%s" opacity="0.85"/>`, badgeWidth, top, b.width-badgeWidth, syncColor)
	}
	sb.WriteString(`</g><g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">`)
	text := func(x, y int, s string) {
		fmt.Fprintf(&sb, `<text x="%d" y="%d">%s</text>`, x, y, html.EscapeString(s))
	}
	if b.title != "" {
		text(b.width/2, 14, b.title)
	}
	text(badgeLeftWidth/2, top+14, b.left)
	text((badgeLeftWidth+statusEnd)/2, top+14, b.right)
	if b.revision != "" {
		fmt.Fprintf(&sb, `<text x="%d" y="%d" font-family="monospace">(%s)</text>`, (badgeWidth+b.width)/2, top+14, html.EscapeString(b.revision))
	}
	sb.WriteString(`</g></svg>`)
	return sb.String()
}

// label is the badge's text, for screen readers.
func (b badge) label() string {
	parts := []string{b.left}
	if b.right != "" {
		parts = append(parts, b.right)
	}
	if b.revision != "" {
		parts = append(parts, b.revision)
	}
	label := strings.Join(parts, ", ")
	if b.title != "" {
		label = b.title + ": " + label
	}
	return label
}
