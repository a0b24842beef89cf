// Package creds resolves the registry credentials Argo CD Image Updater's
// settings name: pullsecret:<ns>/<name> (a Docker config Secret),
// secret:<ns>/<name>#<field> (a field holding user:password),
// env:<VARIABLE> (user:password) and ext:<script> (a program printing
// user:password, such as an ECR login). Credentials are reused until
// they expire; errors name the source, never the secret.
//
// A source an object's author wrote (an Application annotation, an
// ImageUpdater) is a tenant's: it may name only Secrets its scope reaches
// (see settings.SecretScope), and never env: or ext:, which only an
// administrator's registries.conf may use.
package creds

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/imageupdater/registry"
	"github.com/capstan-cd/capstan/internal/settings"
)

// DefaultScriptTimeout bounds an ext: script.
const DefaultScriptTimeout = time.Minute

// Resolver resolves credential sources. Client is required.
type Resolver struct {
	// Client reads Secrets.
	Client client.Reader
	// ScriptTimeout bounds ext: scripts. Default DefaultScriptTimeout.
	ScriptTimeout time.Duration

	mu    sync.Mutex
	cache map[string]entry
	now   func() time.Time
}

type entry struct {
	creds registry.Credentials
	until time.Time // zero: no expiry
}

// Source is a credential source and who wrote it.
type Source struct {
	// Ref is pullsecret:<ns>/<name>, secret:<ns>/<name>#<field>,
	// env:<VARIABLE> or ext:<path>; empty is anonymous access.
	Ref string
	// Tenant, when set, is the scope of the object whose author wrote Ref
	// (an Application annotation, an ImageUpdater): env: and ext: are
	// refused, and Secrets are read only as the scope allows. Nil: an
	// administrator's setting (registries.conf), read as written.
	Tenant *settings.SecretScope
}

// Admin is a source from an administrator's settings.
func Admin(ref string) Source { return Source{Ref: ref} }

// ErrTenantSource refuses an env: or ext: source an object's author wrote.
var ErrTenantSource = errors.New("env: and ext: credentials may only be set in registries.conf")

// Resolve returns the credentials source names for a registry host,
// reusing them for expire (0: until the process ends). An empty source
// is anonymous access.
func (r *Resolver) Resolve(ctx context.Context, src Source, host string, expire time.Duration) (registry.Credentials, error) {
	source := src.Ref
	if source == "" {
		return registry.Credentials{}, nil
	}
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	key := source + "|" + host
	if src.Tenant != nil {
		key += "|tenant of " + src.Tenant.Namespace
	}
	r.mu.Lock()
	e, ok := r.cache[key]
	r.mu.Unlock()
	if ok && (e.until.IsZero() || now().Before(e.until)) {
		return e.creds, nil
	}
	creds, err := r.read(ctx, src, host)
	if err != nil {
		return registry.Credentials{}, err
	}
	e = entry{creds: creds}
	if expire > 0 {
		e.until = now().Add(expire)
	}
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[string]entry{}
	}
	r.cache[key] = e
	r.mu.Unlock()
	return creds, nil
}

func (r *Resolver) read(ctx context.Context, src Source, host string) (registry.Credentials, error) {
	source := src.Ref
	kind, ref, _ := strings.Cut(source, ":")
	if src.Tenant != nil && (kind == "env" || kind == "ext") {
		return registry.Credentials{}, fmt.Errorf("credentials %s: %w", source, ErrTenantSource)
	}
	switch kind {
	case "pullsecret":
		s, err := r.secret(ctx, src, ref)
		if err != nil {
			return registry.Credentials{}, err
		}
		return fromDockerConfig(s, host, source)
	case "secret":
		ref, field, ok := strings.Cut(ref, "#")
		if !ok || field == "" {
			return registry.Credentials{}, fmt.Errorf("credentials %s: want secret:<namespace>/<name>#<field>", source)
		}
		s, err := r.secret(ctx, src, ref)
		if err != nil {
			return registry.Credentials{}, err
		}
		v, ok := s.Data[field]
		if !ok {
			return registry.Credentials{}, fmt.Errorf("credentials %s: Secret/%s/%s has no field %s", source, s.Namespace, s.Name, field)
		}
		return userPassword(string(v), source)
	case "env":
		v, ok := os.LookupEnv(ref)
		if !ok {
			return registry.Credentials{}, fmt.Errorf("credentials %s: the variable is not set", source)
		}
		return userPassword(v, source)
	case "ext":
		return r.script(ctx, ref, source)
	}
	return registry.Credentials{}, fmt.Errorf("credentials %q: the source must start with pullsecret, secret, env or ext", source)
}

// secret reads the Secret a source names: as its tenant scope allows, or
// (an administrator's source) as written.
func (r *Resolver) secret(ctx context.Context, src Source, ref string) (*corev1.Secret, error) {
	source := src.Ref
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("credentials %s: the Secret must be <namespace>/<name>", source)
	}
	if src.Tenant != nil {
		s, err := src.Tenant.Read(ctx, r.Client, ns, name)
		if err != nil {
			return nil, fmt.Errorf("credentials %s: %w", source, err)
		}
		return s, nil
	}
	s := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		return nil, fmt.Errorf("credentials %s: %w", source, err)
	}
	return s, nil
}

// fromDockerConfig finds the registry's entry in a pull Secret's Docker
// configuration (.dockerconfigjson, or the older .dockercfg).
func fromDockerConfig(s *corev1.Secret, host, source string) (registry.Credentials, error) {
	type auth struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Auth     string `json:"auth"`
	}
	auths := map[string]auth{}
	if data, ok := s.Data[corev1.DockerConfigJsonKey]; ok {
		var cfg struct {
			Auths map[string]auth `json:"auths"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return registry.Credentials{}, fmt.Errorf("credentials %s: %s is not valid JSON", source, corev1.DockerConfigJsonKey)
		}
		auths = cfg.Auths
	} else if data, ok := s.Data[corev1.DockerConfigKey]; ok {
		if err := json.Unmarshal(data, &auths); err != nil {
			return registry.Credentials{}, fmt.Errorf("credentials %s: %s is not valid JSON", source, corev1.DockerConfigKey)
		}
	} else {
		return registry.Credentials{}, fmt.Errorf("credentials %s: Secret/%s/%s holds no Docker configuration", source, s.Namespace, s.Name)
	}
	for server, a := range auths {
		if hostOf(server) != host {
			continue
		}
		if a.Username != "" || a.Password != "" {
			return registry.Credentials{Username: a.Username, Password: a.Password}, nil
		}
		decoded, err := base64.StdEncoding.DecodeString(a.Auth)
		if err != nil {
			return registry.Credentials{}, fmt.Errorf("credentials %s: the auth of %s is not base64", source, server)
		}
		return userPassword(string(decoded), source)
	}
	return registry.Credentials{}, fmt.Errorf("credentials %s: no entry for %s", source, host)
}

// hostOf reduces a Docker config server key (a host, or a URL) to its
// host[:port].
func hostOf(server string) string {
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		return u.Host
	}
	return strings.SplitN(server, "/", 2)[0]
}

func userPassword(v, source string) (registry.Credentials, error) {
	user, password, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok {
		return registry.Credentials{}, fmt.Errorf("credentials %s: the value is not user:password", source)
	}
	return registry.Credentials{Username: user, Password: password}, nil
}

// script runs an ext: program with a timeout and reads user:password from
// the last line it prints.
func (r *Resolver) script(ctx context.Context, path, source string) (registry.Credentials, error) {
	timeout := r.ScriptTimeout
	if timeout == 0 {
		timeout = DefaultScriptTimeout
	}
	if err := checkScript(path); err != nil {
		return registry.Credentials{}, fmt.Errorf("credentials %s: %w", source, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The path is run as it is, with no arguments and no shell, and what
	// it prints is read up to maxScriptOutput.
	cmd := exec.CommandContext(ctx, path)
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: maxScriptOutput}
	err := cmd.Run()
	if ctx.Err() != nil {
		return registry.Credentials{}, fmt.Errorf("credentials %s: the script ran longer than %s", source, timeout)
	}
	if err != nil {
		return registry.Credentials{}, fmt.Errorf("credentials %s: %w", source, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return userPassword(lines[len(lines)-1], source)
}

// maxScriptOutput bounds what an ext: script's output is read to.
const maxScriptOutput = 64 << 10

// checkScript refuses an ext: path that is not an absolute path to an
// executable regular file: it is never looked up in PATH, expanded or
// handed to a shell.
func checkScript(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("ext: needs an absolute path to a program, got %q", path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("ext: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("ext: %s is not an executable file", path)
	}
	return nil
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	keep := min(len(p), l.n)
	if keep > 0 {
		if _, err := l.w.Write(p[:keep]); err != nil {
			return 0, err
		}
		l.n -= keep
	}
	return len(p), nil
}
