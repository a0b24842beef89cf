package repo

import (
	"cmp"
	"context"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
)

// pluginSource returns in as a plugin's input when a config management
// plugin renders it, nil otherwise. As in Argo CD, a source setting
// spec.source.plugin (or an override file doing so) goes to that plugin, and
// a source setting no type is offered to the plugins with discovery rules
// before it is taken for a chart, a Kustomization or a directory. Plugins
// run beside the repo server, never in its render workers: the work is
// theirs, the repo server only streams files.
func (s *Service) pluginSource(ctx context.Context, in *sourceInput) (*plugin.Source, error) {
	_, src, err := in.prepared()
	if err != nil {
		return nil, nil // renderSource reports it, as for any source
	}
	typ, err := explicitType(&src)
	if err != nil {
		return nil, err
	}
	if typ != "" && typ != v1alpha1.SourceTypePlugin {
		return nil, nil
	}
	p := &plugin.Source{Root: in.root, Path: src.Path, Plugin: src.Plugin, Env: buildEnv(in.req, &src, in.revision), GeneratePaths: in.req.ManifestGeneratePaths}
	if typ == v1alpha1.SourceTypePlugin {
		p.GitCreds, err = s.pluginGitCreds(ctx, src.RepoURL, in.req.Project)
		return p, err
	}
	if src.Chart != "" || !s.plugins.Installed() {
		return nil, nil
	}
	name, err := s.plugins.Discover(ctx, p)
	if err != nil || name == "" {
		return nil, err
	}
	p.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: name}
	p.GitCreds, err = s.pluginGitCreds(ctx, src.RepoURL, in.req.Project)
	return p, err
}

// pluginGitCreds are the repository's HTTPS credentials as a plugin asking
// for them gets them (a token alone goes with Argo CD's x-access-token
// user); nil when it has none.
func (s *Service) pluginGitCreds(ctx context.Context, repoURL, project string) (*plugin.GitCreds, error) {
	if repoURL == "" || s.opts.Credentials == nil {
		return nil, nil
	}
	c, err := s.opts.Credentials.ForRepo(ctx, repoURL, project)
	if err != nil || c.Password == "" {
		return nil, err
	}
	return &plugin.GitCreds{Username: cmp.Or(c.Username, "x-access-token"), Password: c.Password, Insecure: c.Insecure}, nil
}

// pluginDetails answers AppDetails for a Git source a plugin renders: the
// parameters the plugin announces. Nil: no plugin renders it.
func (s *Service) pluginDetails(ctx context.Context, root string, src v1alpha1.ApplicationSource) (*AppDetails, error) {
	p, err := s.pluginSource(ctx, &sourceInput{root: root, source: src, req: &Request{}})
	if p == nil || err != nil {
		return nil, err
	}
	params, err := s.plugins.Parameters(ctx, p)
	if err != nil {
		return nil, err
	}
	return &AppDetails{Type: v1alpha1.SourceTypePlugin, Plugin: &PluginAppSpec{ParametersAnnouncement: params}}, nil
}
