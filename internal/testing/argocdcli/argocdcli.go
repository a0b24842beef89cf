// Package argocdcli runs Argo CD's own CLI (built by `make argocd` from
// the Argo CD module tools/argocd pins) in tests, with a config file and
// home directory of the test's own.
package argocdcli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// CLI runs argocd commands as one user.
type CLI struct {
	t      testing.TB
	bin    string
	config string
	home   string
	// Flags are added to every command (--grpc-web, say).
	Flags []string
}

// New returns a CLI with an empty config.
func New(t testing.TB) *CLI {
	t.Helper()
	home := t.TempDir()
	return &CLI{t: t, bin: toolbin.Find(t, "CAPSTAN_ARGOCD_BIN", filepath.Join("bin", "argocd", "argocd"), "argocd"),
		config: filepath.Join(home, "config"), home: home}
}

// Run runs one command and returns its exit code and outputs.
func (c *CLI) Run(args ...string) (int, string, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append(append(args, "--config", c.config), c.Flags...)
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+c.home, "ARGOCD_OPTS=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		c.t.Fatalf("argocd %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String()
}

// Expect runs a command, fails the test unless it exits with want, and
// returns its standard output.
func (c *CLI) Expect(want int, args ...string) string {
	c.t.Helper()
	code, out, errOut := c.Run(args...)
	if code != want {
		c.t.Fatalf("argocd %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out
}

// Token is the session token the config holds for its current context
// ("" when logged out).
func (c *CLI) Token() string {
	c.t.Helper()
	data, err := os.ReadFile(c.config)
	if err != nil {
		return ""
	}
	var cfg struct {
		CurrentContext string `json:"current-context"`
		Contexts       []struct{ Name, User string }
		Users          []struct {
			Name      string
			AuthToken string `json:"auth-token"`
		}
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		c.t.Fatalf("argocd config %s: %v", c.config, err)
	}
	for _, ctx := range cfg.Contexts {
		if ctx.Name != cfg.CurrentContext {
			continue
		}
		for _, u := range cfg.Users {
			if u.Name == ctx.User {
				return u.AuthToken
			}
		}
	}
	return ""
}
