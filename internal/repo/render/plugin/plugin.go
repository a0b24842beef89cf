package plugin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/safetext"
)

// DefaultSocketDir is where Argo CD's install mounts the plugins' sockets
// in the repo server and its sidecars.
const DefaultSocketDir = "/home/argocd/cmp-server/plugins"

// Options configure a Client.
type Options struct {
	// SocketDir holds the plugins' sockets. Default DefaultSocketDir, as
	// Argo CD's ARGOCD_PLUGINSOCKFILEPATH.
	SocketDir string
	// Exclude are globs of paths, relative to the repository's root, left
	// out of what is sent to a plugin, as Argo CD's
	// reposerver.plugin.tar.exclusions. Default: none.
	Exclude []string
	// ChunkSize is the size of each piece of the archive sent. Default 1024
	// bytes, as Argo CD's ARGOCD_CMP_CHUNK_SIZE.
	ChunkSize int
	// MaxArchiveBytes bounds the files sent for one source. Default 2 GiB,
	// the bound of a checkout.
	MaxArchiveBytes int64
	// MaxManifestBytes bounds a plugin's answer. Default 64 MiB, the bound
	// of a rendered source.
	MaxManifestBytes int
	// AskPass serves a source's Git credentials to the plugins whose
	// plugin.yaml sets provideGitCreds. Nil: none get them.
	AskPass *AskPass
	// UseManifestGeneratePaths sends a plugin rendering a source with
	// manifest-generate-paths only the directory holding the source and
	// those paths, rather than the whole checkout, as Argo CD's
	// reposerver.plugin.use.manifest.generate.paths. Discovery still sees
	// the whole checkout. Default false.
	UseManifestGeneratePaths bool
}

// Client renders sources with the plugins in its socket directory. It
// keeps no connections: each call dials the plugin's socket.
type Client struct {
	opts Options
}

// New returns a Client with opts' defaults filled in.
func New(opts Options) *Client {
	opts.SocketDir = cmp.Or(opts.SocketDir, DefaultSocketDir)
	opts.ChunkSize = cmp.Or(opts.ChunkSize, 1024)
	opts.MaxArchiveBytes = cmp.Or(opts.MaxArchiveBytes, 2<<30)
	opts.MaxManifestBytes = cmp.Or(opts.MaxManifestBytes, 64<<20)
	return &Client{opts: opts}
}

// Source is one source to render with a plugin.
type Source struct {
	// Root is the repository's checkout; all of it is sent.
	Root string
	// Path is the source's directory, relative to Root.
	Path string
	// Plugin is the source's plugin block: its name (empty: discover one),
	// env and parameters. Nil: discover, with no env or parameters.
	Plugin *v1alpha1.ApplicationSourcePlugin
	// Env holds the build variables (ARGOCD_APP_NAME and the like), which
	// plugin.env values may refer to as $NAME.
	Env map[string]string
	// GitCreds are the repository's credentials, for a plugin that asks
	// for them (provideGitCreds). Nil: the repository needs none.
	GitCreds *GitCreds
	// GeneratePaths is the Application's manifest-generate-paths
	// annotation (see Options.UseManifestGeneratePaths). Default none.
	GeneratePaths string
}

// ErrNotFound means no plugin renders the source: the one it names does
// not listen, or none discovers it.
var ErrNotFound = errors.New("no plugin found")

// Installed reports whether any plugin listens in the socket directory;
// without one, discovery has nothing to ask and sources keep their usual
// types.
func (c *Client) Installed() bool {
	sockets, _ := c.sockets()
	return len(sockets) > 0
}

// Names lists the plugins listening in the socket directory, by the names
// a source gives them (the socket's name without .sock), sorted.
func (c *Client) Names() ([]string, error) {
	sockets, err := c.sockets()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(sockets))
	for i, socket := range sockets {
		names[i] = strings.TrimSuffix(socket, ".sock")
	}
	slices.Sort(names)
	return names, nil
}

// Discover returns the name of the plugin, among those with discovery
// rules, that claims src (the first by socket name), or "" when none does.
func (c *Client) Discover(ctx context.Context, src *Source) (string, error) {
	sockets, err := c.sockets()
	if err != nil || len(sockets) == 0 {
		return "", err
	}
	req, err := c.prepare(src, false)
	if err != nil {
		return "", err
	}
	defer req.close()
	for _, socket := range sockets {
		if ok, _ := c.claims(ctx, socket, req, false); ok {
			return strings.TrimSuffix(socket, ".sock"), nil
		}
	}
	return "", nil
}

// Render renders src with the plugin it names, or with the one discovery
// finds, and returns the objects the plugin printed.
func (c *Client) Render(ctx context.Context, src *Source) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	err := c.withPlugin(ctx, src, true, func(socket string, req *request) error {
		manifests, err := c.generate(ctx, socket, req, src.GitCreds)
		if err != nil {
			return err
		}
		for i, text := range manifests {
			found, err := manifest.Parse(fmt.Sprintf("output %d", i+1), []byte(text))
			if err != nil {
				return err
			}
			objs = append(objs, found...)
		}
		return nil
	})
	return objs, err
}

// Parameters returns the parameters the plugin that renders src announces
// (what Argo CD's UI offers as the plugin's form), each as the JSON of
// Argo CD's ParameterAnnouncement.
func (c *Client) Parameters(ctx context.Context, src *Source) ([]json.RawMessage, error) {
	var params []json.RawMessage
	err := c.withPlugin(ctx, src, false, func(socket string, req *request) (err error) {
		params, err = c.announcements(ctx, socket, req)
		return err
	})
	return params, err
}

// withPlugin packs src (narrowed to its manifest-generate-paths when
// narrow and Options.UseManifestGeneratePaths), finds the plugin for it
// and calls do with them; an error of do names the plugin.
func (c *Client) withPlugin(ctx context.Context, src *Source, narrow bool, do func(socket string, req *request) error) error {
	req, err := c.prepare(src, narrow && c.opts.UseManifestGeneratePaths)
	if err != nil {
		return err
	}
	defer req.close()
	socket, err := c.find(ctx, src, req)
	if err != nil {
		return err
	}
	if err := do(socket, req); err != nil {
		return fmt.Errorf("plugin %s: %w", strings.TrimSuffix(socket, ".sock"), err)
	}
	return nil
}

// find returns the socket of the plugin to render src with, with Argo CD's
// messages when there is none.
func (c *Client) find(ctx context.Context, src *Source, req *request) (string, error) {
	if name := pluginName(src); name != "" {
		socket := name + ".sock"
		if err := validName(name); err != nil {
			return "", err
		}
		if ok, err := c.claims(ctx, socket, req, true); !ok {
			return "", fmt.Errorf("could not find cmp-server plugin with name %q supporting the given repository: %w", name, cmp.Or(err, ErrNotFound))
		}
		return socket, nil
	}
	sockets, err := c.sockets()
	if err != nil {
		return "", err
	}
	for _, socket := range sockets {
		if ok, _ := c.claims(ctx, socket, req, false); ok {
			return socket, nil
		}
	}
	return "", fmt.Errorf("could not find plugin supporting the given repository: %w", ErrNotFound)
}

func pluginName(src *Source) string {
	if src.Plugin == nil {
		return ""
	}
	return src.Plugin.Name
}

// validName refuses a plugin name that is not a plain file name in the
// socket directory.
func validName(name string) error {
	if len(name) > 253 || strings.ContainsAny(name, "/\\\x00") || name == "." || name == ".." {
		return fmt.Errorf("plugin name %q: want the name of a plugin (metadata.name, or <name>-<version>)", safetext.Truncate(name, 64))
	}
	return nil
}

// sockets lists the socket files of the socket directory, sorted by name.
func (c *Client) sockets() ([]string, error) {
	entries, err := os.ReadDir(c.opts.SocketDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing plugins in %s: %w", c.opts.SocketDir, err)
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func (c *Client) socketPath(socket string) string {
	return filepath.Join(c.opts.SocketDir, socket)
}
