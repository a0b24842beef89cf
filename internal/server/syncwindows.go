package server

import (
	"errors"
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
func (s *Server) applicationSyncWindows(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	proj, err := s.project(r, app)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ws := project.MatchWindows(proj, app)
	canSync, err := ws.CanSync(true, now)
	if err != nil {
		return nil, err
	}
	active, _ := ws.Active(now) // read without error by CanSync
	return struct {
		ActiveWindows   []appSyncWindow `json:"activeWindows,omitempty"`
		AssignedWindows []appSyncWindow `json:"assignedWindows,omitempty"`
		CanSync         bool            `json:"canSync"`
	}{appSyncWindows(active), appSyncWindows(ws), canSync}, nil
}

// projectSyncWindows answers GET /api/v1/projects/{name}/syncwindows: the
// project's windows open now, whichever apps they match.
func (s *Server) projectSyncWindows(r *http.Request, c *caller) (any, error) {
	p, err := s.loadProject(r, c)
	if err != nil {
		return nil, err
	}
	active, err := project.Windows(p.Spec.SyncWindows).Active(time.Now())
	if err != nil {
		return nil, err
	}
	return struct {
		Windows []*v1alpha1.SyncWindow `json:"windows,omitempty"`
	}{active}, nil
}

// checkSyncWindows is Argo CD's PermissionDenied when the sync windows of
// the app's project keep a manual sync from running now.
func (s *Server) checkSyncWindows(r *http.Request, app *v1alpha1.Application) error {
	proj, err := s.project(r, app)
	if err != nil {
		return err
	}
	ok, err := project.MatchWindows(proj, app).CanSync(true, time.Now())
	switch {
	case err != nil:
		return withStatus(http.StatusForbidden, fmt.Errorf("cannot sync: invalid sync window: %w", err))
	case !ok:
		return withStatus(http.StatusForbidden, errors.New(project.BlockedBySyncWindow))
	}
	return nil
}
