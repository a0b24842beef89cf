// Package plugin renders sources with config management plugins, over Argo
// CD's sidecar protocol: each plugin is a process (Argo CD's
// argocd-cmp-server in a sidecar container, running the commands its
// plugin.yaml names) listening on a Unix socket, <name>.sock or
// <name>-<version>.sock, in a directory it shares with the repo server.
//
// For each source the repo server packs the checkout into a tar.gz and
// streams it to the plugin with the source's environment: Argo CD's build
// variables (ARGOCD_APP_NAME, ARGOCD_APP_REVISION, KUBE_VERSION, …), the
// source's plugin.env as ARGOCD_ENV_<name>, and its plugin.parameters as
// PARAM_<NAME> variables and the ARGOCD_APP_PARAMETERS JSON. A source naming
// its plugin uses that plugin; one naming none uses the first plugin, by
// socket name, whose discovery rules match the files.
//
// Serve is the other side, what a sidecar runs (capstan cmp-server, also
// under Argo CD's name argocd-cmp-server): it reads a plugin.yaml, listens
// on the plugin's socket and runs its init, generate and discovery
// commands in each request's unpacked files.
//
//	c := plugin.New(plugin.Options{})   // the sockets in /home/argocd/cmp-server/plugins
//	objs, err := c.Render(ctx, &plugin.Source{Root: checkout, Path: "app", Plugin: src.Plugin, Env: env})
//
//	cfg, err := plugin.ReadConfig("/home/argocd/cmp-server/config")
//	err = plugin.Serve(ctx, plugin.ServeOptions{Config: cfg})
package plugin
