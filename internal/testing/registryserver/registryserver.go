// Package registryserver runs a real container registry for tests: the
// CNCF distribution registry (github.com/distribution/distribution/v3),
// in memory, with htpasswd basic auth or bearer tokens from its own token
// server, on a free loopback port; and pushes
// images and multi-arch indexes to it with go-containerregistry.
package registryserver

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"

	// The registry's in-memory storage and htpasswd auth register
	// themselves when imported.
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

// Registry is a running registry.
type Registry struct {
	// Host is host:port, to prefix image names with.
	Host string
	// Username and Password are the only credentials it accepts.
	Username, Password string
	// CA is the PEM certificate of a registry started with StartTLS, which
	// a client must trust; empty for plain HTTP.
	CA []byte

	tls       bool
	transport http.RoundTripper // the pushes', trusting CA

	requests atomic.Int64
	tokens   atomic.Int64
}

// Start runs a registry with htpasswd basic auth until the test ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	return start(t, &Registry{Username: "ci", Password: "registry-pa55"})
}

// StartTLS is Start over HTTPS, with a certificate of its own (CA) that no
// system trusts.
func StartTLS(t testing.TB) *Registry {
	t.Helper()
	return start(t, &Registry{Username: "ci", Password: "registry-pa55", tls: true})
}

func start(t testing.TB, r *Registry) *Registry {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(r.Username+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.serve(t, func(string) configuration.Auth {
		return configuration.Auth{"htpasswd": configuration.Parameters{"realm": "capstan-test", "path": htpasswd}}
	}, nil)
	return r
}

// serve runs the registry until the test ends, with the auth that
// auth returns for the registry's host:port; tokens, if set, answers
// /token on the same host (a realm on the registry's own host is one
// clients accept on a loopback address).
func (r *Registry) serve(t testing.TB, auth func(host string) configuration.Auth, tokens http.Handler) {
	srv := httptest.NewUnstartedServer(nil)
	r.Host = srv.Listener.Addr().String()
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{"inmemory": configuration.Parameters{}},
		Auth:    auth(r.Host),
	}
	cfg.Log.Level = "error"
	cfg.HTTP.Headers = http.Header{"X-Content-Type-Options": []string{"nosniff"}}
	logrus.SetOutput(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	app := handlers.NewApp(ctx, cfg)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if tokens != nil && req.URL.Path == "/token" {
			tokens.ServeHTTP(w, req)
			return
		}
		if strings.HasPrefix(req.URL.Path, "/v2/") && req.URL.Path != "/v2/" {
			r.requests.Add(1)
		}
		app.ServeHTTP(w, req)
	})
	if r.tls {
		srv.StartTLS()
		r.CA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		r.transport = srv.Client().Transport
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
}

// Requests counts the API requests under /v2/ other than the version
// check, for tests that bound how many a component makes.
func (r *Registry) Requests() int64 { return r.requests.Load() }

// Auth is the registry's credentials for go-containerregistry.
func (r *Registry) Auth() authn.Authenticator {
	return &authn.Basic{Username: r.Username, Password: r.Password}
}

// pushOptions are go-containerregistry's options for a push here.
func (r *Registry) pushOptions() []remote.Option {
	opts := []remote.Option{remote.WithAuth(r.Auth())}
	if r.transport != nil {
		opts = append(opts, remote.WithTransport(r.transport))
	}
	return opts
}

// Ref parses repo:tag on this registry.
func (r *Registry) Ref(t testing.TB, repoTag string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(r.Host+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// PushImage pushes a small random image built at created under every tag
// given, and returns its digest.
func (r *Registry) PushImage(t testing.TB, repo string, created time.Time, tags ...string) v1.Hash {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.CreatedAt(img, v1.Time{Time: created}); err != nil {
		t.Fatal(err)
	}
	return r.push(t, repo, img, tags)
}

// push writes img under every tag given and returns its digest.
func (r *Registry) push(t testing.TB, repo string, img v1.Image, tags []string) v1.Hash {
	t.Helper()
	for _, tag := range tags {
		if err := remote.Write(r.Ref(t, repo+":"+tag), img, r.pushOptions()...); err != nil {
			t.Fatalf("pushing %s:%s: %v", repo, tag, err)
		}
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// PushIndex pushes a multi-arch index with one random image per platform
// ("linux/amd64", "linux/arm64/v8") under tag, and returns its digest.
func (r *Registry) PushIndex(t testing.TB, repo, tag string, created time.Time, platforms ...string) v1.Hash {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	for _, p := range platforms {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		if img, err = mutate.CreatedAt(img, v1.Time{Time: created}); err != nil {
			t.Fatal(err)
		}
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
	}
	if err := remote.WriteIndex(r.Ref(t, repo+":"+tag), idx, r.pushOptions()...); err != nil {
		t.Fatalf("pushing the index %s:%s: %v", repo, tag, err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
