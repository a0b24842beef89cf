package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/mattn/go-shellwords"
	"github.com/spf13/pflag"
)

// The environment Argo CD's CLI reads, which Capstan's reads the same way
// under either name: ARGOCD_SERVER and ARGOCD_AUTH_TOKEN stand in for
// --server and --auth-token (a flag wins over its variable, a variable over
// the configuration's context), and ARGOCD_OPTS holds global flags that
// become those flags' defaults ("--grpc-web --plaintext", say).
const (
	envServer    = "ARGOCD_SERVER"
	envAuthToken = "ARGOCD_AUTH_TOKEN"
	envOpts      = "ARGOCD_OPTS"
)

// componentEnv names the variables that set the install's component names
// for --core and --port-forward.
var componentEnv = map[string]string{
	"server-name":        "ARGOCD_SERVER_NAME",
	"repo-server-name":   "ARGOCD_REPO_SERVER_NAME",
	"controller-name":    "ARGOCD_APPLICATION_CONTROLLER_NAME",
	"redis-name":         "ARGOCD_REDIS_NAME",
	"redis-haproxy-name": "ARGOCD_REDIS_HAPROXY_NAME",
}

// maxEnvOpts bounds ARGOCD_OPTS: a command line's worth.
const maxEnvOpts = 64 << 10

// parseEnvOpts reads flags from an ARGOCD_OPTS value as Argo CD does:
// shell words, each --name either followed by its value, or =value, or
// alone (true); anything else is an error.
func parseEnvOpts(value string) (map[string]string, error) {
	if len(value) > maxEnvOpts {
		return nil, fmt.Errorf("%s is longer than %d bytes", envOpts, maxEnvOpts)
	}
	words, err := shellwords.Parse(value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envOpts, err)
	}
	opts := map[string]string{}
	key := ""
	for _, w := range words {
		name, isFlag := strings.CutPrefix(w, "--")
		switch {
		case isFlag && name != "":
			if key != "" {
				opts[key] = "true"
			}
			key = name
			if k, v, ok := strings.Cut(name, "="); ok {
				opts[k], key = v, ""
			}
		case key != "":
			opts[key], key = w, ""
		default:
			return nil, fmt.Errorf("%s: %q is not a --flag or its value", envOpts, w)
		}
	}
	if key != "" {
		opts[key] = "true"
	}
	return opts, nil
}

// applyEnvDefaults makes the environment's values the defaults of the
// global flags in fs: the component names' variables, then ARGOCD_OPTS
// (names that are not global flags are left alone, as Argo CD does).
func applyEnvDefaults(fs *pflag.FlagSet) error {
	for flag, env := range componentEnv {
		if v := os.Getenv(env); v != "" {
			if err := setDefault(fs.Lookup(flag), v); err != nil {
				return fmt.Errorf("%s: %w", env, err)
			}
		}
	}
	opts, err := parseEnvOpts(os.Getenv(envOpts))
	if err != nil {
		return err
	}
	for name, v := range opts {
		if err := setDefault(fs.Lookup(name), v); err != nil {
			return fmt.Errorf("%s: --%s: %w", envOpts, name, err)
		}
	}
	return nil
}

// setDefault sets flag's value before the command line is read, which
// then overrides it.
func setDefault(flag *pflag.Flag, value string) error {
	if flag == nil {
		return nil
	}
	if err := flag.Value.Set(value); err != nil {
		return err
	}
	flag.DefValue = flag.Value.String()
	return nil
}
