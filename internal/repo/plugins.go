package repo

import (
	"context"
)

// PluginsRequest asks which config management plugins the repo server
// can render with.
type PluginsRequest struct{}

// PluginsResponse lists them, as Argo CD's settings API answers
// GET /api/v1/settings/plugins.
type PluginsResponse struct {
	Items []Plugin `json:"items"`
}

// Plugin is one config management plugin: a sidecar listening in the
// plugin socket directory, by the name an Application's
// spec.source.plugin.name gives (<name> or <name>-<version>).
type Plugin struct {
	Name string `json:"name"`
}

// Plugins lists the plugins whose sidecars listen now, sorted by name;
// none when the repo server has no plugin directory.
func (s *Service) Plugins(_ context.Context, _ *PluginsRequest) (*PluginsResponse, error) {
	out := &PluginsResponse{Items: []Plugin{}}
	if s.plugins == nil {
		return out, nil
	}
	names, err := s.plugins.Names()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		out.Items = append(out.Items, Plugin{Name: name})
	}
	return out, nil
}
