package server

import (
	"net/http"

	"github.com/capstan-cd/capstan/internal/settings"
)

// notificationRoutes registers the notification service's catalog lists.
func (s *Server) notificationRoutes() {
	s.mux.HandleFunc("GET /api/v1/notifications/services", s.api(s.listNotificationServices))
	s.mux.HandleFunc("GET /api/v1/notifications/triggers", s.api(s.listNotificationTriggers))
	s.mux.HandleFunc("GET /api/v1/notifications/templates", s.api(s.listNotificationTemplates))
}

// The notifications settings as Argo CD's NotificationService lists them:
// the names of the services, triggers and templates argocd-notifications-cm
// defines, for any signed-in user (Argo CD asks no RBAC of these).

// namedItem is one entry of the lists.
type namedItem struct {
	Name string `json:"name"`
}

func (s *Server) listNotificationServices(r *http.Request, _ *caller) (any, error) {
	return s.notificationNames(r, (*settings.Notifications).Services)
}

func (s *Server) listNotificationTriggers(r *http.Request, _ *caller) (any, error) {
	return s.notificationNames(r, (*settings.Notifications).Triggers)
}

func (s *Server) listNotificationTemplates(r *http.Request, _ *caller) (any, error) {
	return s.notificationNames(r, (*settings.Notifications).Templates)
}

func (s *Server) notificationNames(r *http.Request, names func(*settings.Notifications) []string) (any, error) {
	n, err := settings.LoadNotifications(r.Context(), s.opts.Client, s.opts.Namespace, "", "")
	if err != nil {
		return nil, err
	}
	items := []namedItem{}
	for _, name := range names(n) {
		items = append(items, namedItem{Name: name})
	}
	return map[string]any{"items": items}, nil
}
