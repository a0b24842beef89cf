// Package apiclient is the CLI's side of the API: the local configuration
// of servers, users and contexts (Argo CD's layout and field names), and
// an HTTP client for the REST API.
package apiclient

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"
)

// Config is the CLI's configuration file.
type Config struct {
	CurrentContext string    `json:"current-context"`
	Contexts       []Context `json:"contexts"`
	Servers        []Server  `json:"servers"`
	Users          []User    `json:"users"`
	// PromptsEnabled makes the CLI ask before destructive actions.
	PromptsEnabled bool `json:"prompts-enabled,omitempty"`
}

// Context names a server and the user to reach it as.
type Context struct {
	Name   string `json:"name"`
	Server string `json:"server"`
	User   string `json:"user"`
}

// Server is how to reach an API server.
type Server struct {
	Server    string `json:"server"`
	Insecure  bool   `json:"insecure,omitempty"`
	PlainText bool   `json:"plain-text,omitempty"`
	// GRPCWeb carries the calls over the RPC API with gRPC-Web, for
	// proxies that pass nothing else.
	GRPCWeb bool `json:"grpc-web,omitempty"`
	// GRPCWebRootPath is the path the server is served under behind a
	// reverse proxy; setting it implies GRPCWeb.
	GRPCWebRootPath string `json:"grpc-web-root-path,omitempty"`
	// Core reaches the install through the kubeconfig instead of an API
	// server (what login --core saves, under the server name kubernetes).
	Core bool `json:"core,omitempty"`
}

// CoreServer is the server login --core saves.
const CoreServer = "kubernetes"

// PortForwardServer is the server login --port-forward saves: the API
// server is reached through a port forward to its pod.
const PortForwardServer = "port-forward"

// User holds a session token.
type User struct {
	Name      string `json:"name"`
	AuthToken string `json:"auth-token,omitempty"`
}

// DefaultPath is the configuration file in the user's config directory.
func DefaultPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "capstan", "config")
}

// ArgoCDPath is where Argo CD's CLI keeps its configuration, which Capstan
// reads and writes when it runs as argocd (the format is the same):
// $ARGOCD_CONFIG_DIR/config, else ~/.argocd/config when that exists (older
// installs), else ~/.config/argocd/config.
func ArgoCDPath() string {
	if dir := os.Getenv("ARGOCD_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "config")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	if _, err := os.Stat(filepath.Join(home, ".argocd")); err == nil {
		return filepath.Join(home, ".argocd", "config")
	}
	return filepath.Join(home, ".config", "argocd", "config")
}

// Load reads the configuration; a missing file is an empty one.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := yaml.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return c, nil
}

// Save writes the configuration, readable by its owner only: it holds tokens.
func (c *Config) Save(path string) error {
	data, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// Upsert records a login: server settings, the user's token and a context
// of that name, which becomes the current one.
func (c *Config) Upsert(name string, s Server, token string) {
	if i := slices.IndexFunc(c.Servers, func(x Server) bool { return x.Server == s.Server }); i >= 0 {
		c.Servers[i] = s
	} else {
		c.Servers = append(c.Servers, s)
	}
	if i := slices.IndexFunc(c.Users, func(u User) bool { return u.Name == name }); i >= 0 {
		c.Users[i].AuthToken = token
	} else {
		c.Users = append(c.Users, User{Name: name, AuthToken: token})
	}
	ctx := Context{Name: name, Server: s.Server, User: name}
	if i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == name }); i >= 0 {
		c.Contexts[i] = ctx
	} else {
		c.Contexts = append(c.Contexts, ctx)
	}
	c.CurrentContext = name
}

// Logout forgets the token of context name (default: the current one);
// the context and server stay, for the next login.
func (c *Config) Logout(name string) error {
	if name == "" {
		name = c.CurrentContext
	}
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return fmt.Errorf("no context named %q", name)
	}
	for j := range c.Users {
		if c.Users[j].Name == c.Contexts[i].User {
			c.Users[j].AuthToken = ""
		}
	}
	return nil
}

// Delete forgets context name, and its server and user when no other
// context names them; deleting the current context leaves none current.
func (c *Config) Delete(name string) error {
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return fmt.Errorf("no context named %q", name)
	}
	gone := c.Contexts[i]
	c.Contexts = slices.Delete(c.Contexts, i, i+1)
	if !slices.ContainsFunc(c.Contexts, func(x Context) bool { return x.Server == gone.Server }) {
		c.Servers = slices.DeleteFunc(c.Servers, func(s Server) bool { return s.Server == gone.Server })
	}
	if !slices.ContainsFunc(c.Contexts, func(x Context) bool { return x.User == gone.User }) {
		c.Users = slices.DeleteFunc(c.Users, func(u User) bool { return u.Name == gone.User })
	}
	if c.CurrentContext == name {
		c.CurrentContext = ""
	}
	return nil
}

// Use makes context name the current one.
func (c *Config) Use(name string) error {
	if !slices.ContainsFunc(c.Contexts, func(x Context) bool { return x.Name == name }) {
		return fmt.Errorf("no context named %q", name)
	}
	c.CurrentContext = name
	return nil
}

// Current returns the server and token of the current context.
func (c *Config) Current() (Server, string, error) { return c.Context("") }

// Context returns the server and token of context name ("": the current
// one).
func (c *Config) Context(name string) (Server, string, error) {
	if name == "" {
		name = c.CurrentContext
	} else if !slices.ContainsFunc(c.Contexts, func(x Context) bool { return x.Name == name }) {
		return Server{}, "", fmt.Errorf("no context named %q", name)
	}
	for _, ctx := range c.Contexts {
		if ctx.Name != name {
			continue
		}
		var s Server
		for _, x := range c.Servers {
			if x.Server == ctx.Server {
				s = x
			}
		}
		for _, u := range c.Users {
			if u.Name == ctx.User {
				return s, u.AuthToken, nil
			}
		}
		return s, "", nil
	}
	return Server{}, "", errors.New("no current context: run capstan login first, or pass --server and --auth-token")
}
