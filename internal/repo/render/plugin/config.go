package plugin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// ConfigFile is the name of a plugin's configuration in its config
// directory, as Argo CD's sidecars mount it.
const ConfigFile = "plugin.yaml"

// DefaultConfigDir is where a sidecar reads ConfigFile from by default.
const DefaultConfigDir = "/home/argocd/cmp-server/config"

// maxConfigBytes bounds a plugin.yaml.
const maxConfigBytes = 1 << 20

// Config is a plugin.yaml: a ConfigManagementPlugin, in Argo CD's format.
type Config struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec ConfigSpec `json:"spec"`
}

// ConfigSpec is what a plugin runs.
type ConfigSpec struct {
	// Version, when set, is part of the socket's name: <name>-<version>.sock.
	Version string `json:"version,omitempty"`
	// Init runs before Generate, in the source's directory.
	Init Command `json:"init,omitempty"`
	// Generate prints the source's manifests (YAML or JSON) on its output.
	Generate Command `json:"generate"`
	// Discover decides which sources the plugin claims when they name no plugin.
	Discover Discover `json:"discover,omitempty"`
	// Parameters are announced to users (the UI's parameter form).
	Parameters Parameters `json:"parameters,omitempty"`
	// PreserveFileMode keeps the files' modes from the repository.
	PreserveFileMode bool `json:"preserveFileMode,omitempty"`
	// ProvideGitCreds asks the repo server for the repository's Git
	// credentials in the environment.
	ProvideGitCreds bool `json:"provideGitCreds,omitempty"`
}

// Command is a program and its arguments.
type Command struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// Discover is a plugin's discovery rule: the first of FileName, Find.Glob
// and Find.Command set decides.
type Discover struct {
	// FileName is a glob of file names in the source's directory.
	FileName string `json:"fileName,omitempty"`
	Find     Find   `json:"find,omitempty"`
}

// Find is a glob of paths under the source's directory (** crosses
// directories), or a command that claims the source by printing anything.
type Find struct {
	Command `json:",inline"`
	Glob    string `json:"glob,omitempty"`
}

// Parameters are the plugin's parameter announcements: static ones, and
// those a command prints as a JSON list.
type Parameters struct {
	Static  []map[string]any `json:"static,omitempty"`
	Dynamic Command          `json:"dynamic,omitempty"`
}

func (d Discover) defined() bool {
	return d.FileName != "" || d.Find.Glob != "" || len(d.Find.Command.Command) > 0
}

// SocketName is the plugin's socket file name.
func (c *Config) SocketName() string {
	if c.Spec.Version != "" {
		return c.Metadata.Name + "-" + c.Spec.Version + ".sock"
	}
	return c.Metadata.Name + ".sock"
}

// ReadConfig reads and checks dir's plugin.yaml, with Argo CD's messages.
func ReadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, ConfigFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxConfigBytes)
	}
	var c Config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, c.validate()
}

func (c *Config) validate() error {
	switch {
	case c.Metadata.Name == "":
		return errors.New("invalid plugin configuration file. metadata.name should be non-empty")
	case c.Kind != "ConfigManagementPlugin":
		return fmt.Errorf("invalid plugin configuration file. kind should be ConfigManagementPlugin, found %s", c.Kind)
	case len(c.Spec.Generate.Command) == 0:
		return errors.New("invalid plugin configuration file. spec.generate command should be non-empty")
	}
	return validName(c.Metadata.Name + "-" + c.Spec.Version)
}
