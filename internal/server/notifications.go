package server

import (
	"net/http"

	"github.com/capstan-cd/capstan/internal/settings"
)

// The notifications settings as Argo CD's NotificationService lists them:
// the names of the services, triggers and templates argocd-notifications-cm
// defines, for any signed-in user (Argo CD asks no RBAC of these).

// namedItem is one entry of the lists.
type namedItem struct {
	Name string `json:"name"`
}

func (s *Server) listNotificationServices(w http.ResponseWriter, r *http.Request, _ *caller) {
	s.notificationNames(w, r, (*settings.Notifications).Services)
}

func (s *Server) listNotificationTriggers(w http.ResponseWriter, r *http.Request, _ *caller) {
	s.notificationNames(w, r, (*settings.Notifications).Triggers)
}

func (s *Server) listNotificationTemplates(w http.ResponseWriter, r *http.Request, _ *caller) {
	s.notificationNames(w, r, (*settings.Notifications).Templates)
}

func (s *Server) notificationNames(w http.ResponseWriter, r *http.Request, names func(*settings.Notifications) []string) {
	n, err := settings.LoadNotifications(r.Context(), s.opts.Client, s.opts.Namespace, "", "")
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	items := []namedItem{}
	for _, name := range names(n) {
		items = append(items, namedItem{Name: name})
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}
