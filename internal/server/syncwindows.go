package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// appSyncWindow is a sync window as Argo CD's API shows it for one
// Application: what it does and when, not whom it matches.
type appSyncWindow struct {
	Kind       string `json:"kind"`
	Schedule   string `json:"schedule"`
	Duration   string `json:"duration"`
	ManualSync bool   `json:"manualSync"`
}

func appSyncWindows(ws project.Windows) []appSyncWindow {
	var out []appSyncWindow
	for _, w := range ws {
		out = append(out, appSyncWindow{Kind: w.Kind, Schedule: w.Schedule, Duration: w.Duration, ManualSync: w.ManualSync})
	}
	return out
}

// applicationSyncWindows answers GET /api/v1/applications/{name}/syncwindows:
// the windows of the app's project that apply to it, those open now, and
// whether a manual sync may run now.
func (s *Server) applicationSyncWindows(w http.ResponseWriter, r *http.Request, c *caller) {
	app := s.loadApp(w, r, c, rbac.ActionGet)
	if app == nil {
		return
	}
	proj := s.project(w, r, app)
	if proj == nil {
		return
	}
	now := time.Now()
	ws := project.MatchWindows(proj, app)
	canSync, err := ws.CanSync(true, now)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	active, _ := ws.Active(now) // read without error by CanSync
	writeJSON(w, http.StatusOK, struct {
		ActiveWindows   []appSyncWindow `json:"activeWindows,omitempty"`
		AssignedWindows []appSyncWindow `json:"assignedWindows,omitempty"`
		CanSync         bool            `json:"canSync"`
	}{appSyncWindows(active), appSyncWindows(ws), canSync})
}

// projectSyncWindows answers GET /api/v1/projects/{name}/syncwindows: the
// project's windows open now, whichever apps they match.
func (s *Server) projectSyncWindows(w http.ResponseWriter, r *http.Request, c *caller) {
	p := s.loadProject(w, r, c)
	if p == nil {
		return
	}
	active, err := project.Windows(p.Spec.SyncWindows).Active(time.Now())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Windows []*v1alpha1.SyncWindow `json:"windows,omitempty"`
	}{active})
}

// syncAllowed writes Argo CD's PermissionDenied answer and returns false
// when the sync windows of the app's project keep a manual sync from
// running now.
func (s *Server) syncAllowed(w http.ResponseWriter, r *http.Request, app *v1alpha1.Application) bool {
	proj := s.project(w, r, app)
	if proj == nil {
		return false
	}
	ok, err := project.MatchWindows(proj, app).CanSync(true, time.Now())
	switch {
	case err != nil:
		writeError(w, http.StatusForbidden, fmt.Sprintf("cannot sync: invalid sync window: %v", err))
	case !ok:
		writeError(w, http.StatusForbidden, project.BlockedBySyncWindow)
	}
	return ok
}
