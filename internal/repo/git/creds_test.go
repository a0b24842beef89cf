package git

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/httpproxy"
)

// TestClientCertificatesBearerTokensAndProxies reaches real Git servers
// the ways a repository Secret can ask for: a TLS client certificate, a
// bearer token instead of a password, and an HTTP proxy (skipped for the
// hosts NoProxy lists). Without the certificate or with a wrong token
// the server refuses.
func TestClientCertificatesBearerTokensAndProxies(t *testing.T) {
	ctx := context.Background()

	mtls := gitserver.NewWith(t, gitserver.Options{TLS: true, ClientCerts: true})
	remote := mtls.NewRepo(t, "certs")
	sha := remote.Commit(t, "c", map[string]string{"a.yaml": "a: 1\n"})
	creds := Creds{Username: mtls.Username, Password: mtls.Password, CAData: mtls.CAData(),
		TLSClientCert: string(mtls.ClientCert), TLSClientKey: string(mtls.ClientKey)}
	if got, err := newStore(t).Repo(remote.URL, creds).ResolveFresh(ctx, "main"); err != nil || got != sha {
		t.Errorf("with the client certificate: %s %v", got, err)
	}
	creds.TLSClientCert, creds.TLSClientKey = "", ""
	if _, err := newStore(t).Repo(remote.URL, creds).ResolveFresh(ctx, "main"); err == nil {
		t.Error("a server that asks for a client certificate answered without one")
	}

	bearer := gitserver.NewWith(t, gitserver.Options{BearerToken: "bb-token-1"})
	remote = bearer.NewRepo(t, "bearer")
	sha = remote.Commit(t, "c", map[string]string{"a.yaml": "a: 1\n"})
	if got, err := newStore(t).Repo(remote.URL, Creds{BearerToken: "bb-token-1"}).ResolveFresh(ctx, "main"); err != nil || got != sha {
		t.Errorf("with the bearer token: %s %v", got, err)
	}
	if _, err := newStore(t).Repo(remote.URL, Creds{BearerToken: "wrong"}).ResolveFresh(ctx, "main"); !errors.Is(err, ErrAuthentication) {
		t.Errorf("a wrong bearer token: %v, want an authentication error", err)
	}

	proxy := httpproxy.New(t)
	via := Creds{Username: bearer.Username, Password: bearer.Password, Proxy: proxy.URL}
	repo := newStore(t).Repo(remote.URL, via)
	if got, err := repo.ResolveFresh(ctx, "main"); err != nil || got != sha {
		t.Fatalf("through the proxy: %s %v", got, err)
	}
	if _, err := repo.Checkout(ctx, sha); err != nil {
		t.Fatalf("checkout through the proxy: %v", err)
	}
	carried := proxy.Carried()
	if carried == 0 {
		t.Fatal("the proxy carried nothing")
	}
	via.NoProxy = strings.Split(strings.TrimPrefix(bearer.URL, "http://"), ":")[0]
	if _, err := newStore(t).Repo(remote.URL, via).ResolveFresh(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if proxy.Carried() != carried {
		t.Error("a host NoProxy lists was reached through the proxy")
	}
}

// TestBuiltinConfig: every git command runs with automatic gc and
// maintenance kept in the foreground, unless NoBuiltinConfig
// (reposerver.enable.builtin.git.config false) leaves that out.
func TestBuiltinConfig(t *testing.T) {
	ctx := context.Background()
	get := func(noBuiltin bool, key string) string {
		t.Helper()
		var out strings.Builder
		err := runGit(ctx, command{binary: "git", dir: t.TempDir(), noBuiltin: noBuiltin}, func(r io.Reader) error {
			_, err := io.Copy(&out, r)
			return err
		}, "config", "--get", key)
		if err != nil {
			return "unset"
		}
		return strings.TrimSpace(out.String())
	}
	for _, key := range []string{"gc.autoDetach", "maintenance.autoDetach"} {
		if got := get(false, key); got != "false" {
			t.Errorf("%s with the built-in configuration: %s, want false", key, got)
		}
		if got := get(true, key); got != "unset" {
			t.Errorf("%s without it: %s, want unset", key, got)
		}
	}
	if got := get(true, "fetch.fsckObjects"); got != "true" {
		t.Errorf("the object checks without the built-in configuration: %s, want true", got)
	}
}
