package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/imageupdater/tags"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// TestTagsAndMetadataFromARealRegistry pushes the tags to a
// distribution registry with htpasswd auth and reads them back.
func TestTagsAndMetadataFromARealRegistry(t *testing.T) {
	reg := registryserver.Start(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	reg.PushImage(t, "team/app", day, "1.0.0")
	reg.PushImage(t, "team/app", day.Add(24*time.Hour), "1.1.0")
	reg.PushImage(t, "team/app", day.Add(48*time.Hour), "1.2.0-rc1")
	reg.PushImage(t, "team/app", day.Add(72*time.Hour), "3f2a9c1", "latest")
	reg.PushIndex(t, "team/app", "multi", day.Add(96*time.Hour), "linux/amd64", "linux/arm64/v8")
	image := reg.Host + "/team/app"
	creds := Credentials{Username: reg.Username, Password: reg.Password}
	c := New(Options{Insecure: func(h string) bool { return h == reg.Host }})

	list, err := c.Tags(ctx, image, creds)
	if err != nil || !slices.Equal(list, []string{"1.0.0", "1.1.0", "1.2.0-rc1", "3f2a9c1", "latest", "multi"}) {
		t.Fatalf("tags: %v %v", list, err)
	}
	if _, err := c.Tags(ctx, image, Credentials{Username: reg.Username, Password: "wrong"}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("wrong password: %v, want ErrUnauthorized", err)
	}
	if _, err := c.Tags(ctx, image, Credentials{}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("anonymous: %v, want ErrUnauthorized", err)
	}

	var withDates []tags.Tag
	for _, tag := range list {
		m, err := c.Metadata(ctx, image, tag, []string{"linux/arm64"}, creds, false)
		if err != nil {
			t.Fatalf("metadata of %s: %v", tag, err)
		}
		withDates = append(withDates, tags.Tag{Name: tag, Created: m.Created, Digest: m.Digest})
	}
	res, err := tags.Select(withDates, tags.Options{Strategy: tags.NewestBuild, Filter: tags.Filter{Ignore: []string{"latest", "multi"}}})
	if err != nil || res.Tag == nil || res.Tag.Name != "3f2a9c1" {
		t.Errorf("newest build: %+v %v", res, err)
	}
	multi, err := c.Metadata(ctx, image, "multi", []string{"linux/arm64"}, creds, false)
	if err != nil || !multi.Created.Equal(day.Add(96*time.Hour)) || !slices.Equal(multi.Platforms, []string{"linux/amd64", "linux/arm64/v8"}) {
		t.Errorf("index metadata: %+v %v", multi, err)
	}
	if _, err := c.Metadata(ctx, image, "multi", []string{"windows/amd64"}, creds, true); !errors.Is(err, ErrNoPlatform) {
		t.Errorf("an index without the wanted platform: %v, want ErrNoPlatform", err)
	}
	if _, err := c.Metadata(ctx, image, "9.9.9", nil, creds, true); !errors.Is(err, ErrNotFound) {
		t.Errorf("a tag the registry does not have: %v, want ErrNotFound", err)
	}

	// Metadata of a tag already seen costs no request; fresh asks again.
	before := reg.Requests()
	if _, err := c.Metadata(ctx, image, "1.0.0", []string{"linux/arm64"}, creds, false); err != nil {
		t.Fatal(err)
	}
	if reg.Requests() != before {
		t.Errorf("a cached tag made %d requests", reg.Requests()-before)
	}
	if _, err := c.Metadata(ctx, image, "latest", nil, creds, true); err != nil || reg.Requests() == before {
		t.Errorf("a fresh read made no request: %v", err)
	}
}

// TestBearerTokenAuth reads a registry that takes bearer tokens from a
// token server, as Docker Hub, GHCR and Harbor do.
func TestBearerTokenAuth(t *testing.T) {
	reg := registryserver.StartWithTokens(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	reg.PushImage(t, "team/app", day, "1.0.0", "1.1.0")
	image := reg.Host + "/team/app"
	c := New(Options{Insecure: func(h string) bool { return h == reg.Host }})
	before := reg.TokenRequests()
	list, err := c.Tags(ctx, image, Credentials{Username: reg.Username, Password: reg.Password})
	if err != nil || !slices.Equal(list, []string{"1.0.0", "1.1.0"}) {
		t.Fatalf("tags: %v %v", list, err)
	}
	if reg.TokenRequests() == before {
		t.Error("the tags were read without a token")
	}
	m, err := c.Metadata(ctx, image, "1.1.0", nil, Credentials{Username: reg.Username, Password: reg.Password}, false)
	if err != nil || !m.Created.Equal(day) {
		t.Errorf("metadata: %+v %v", m, err)
	}
	if _, err := c.Tags(ctx, image, Credentials{Username: reg.Username, Password: "wrong"}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("wrong password: %v, want ErrUnauthorized", err)
	}
}

// TestPaginatedTagList reads every page of a tag list.
func TestPaginatedTagList(t *testing.T) {
	reg := registryserver.Start(t)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	want := []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"}
	reg.PushImage(t, "team/app", day, want...)
	c := New(Options{Insecure: func(h string) bool { return h == reg.Host }, PageSize: 2})
	before := reg.Requests()
	list, err := c.Tags(context.Background(), reg.Host+"/team/app", Credentials{Username: reg.Username, Password: reg.Password})
	if err != nil || !slices.Equal(list, want) {
		t.Fatalf("tags: %v %v", list, err)
	}
	if n := reg.Requests() - before; n != 3 {
		t.Errorf("%d requests for 5 tags in pages of 2, want 3", n)
	}
}

// TestRegistryWithACertificateAuthorityOfItsOwn reads a registry whose
// certificate no system trusts: refused by default, read once its
// authority is trusted for that registry, and read without verification
// when it is marked insecure.
func TestRegistryWithACertificateAuthorityOfItsOwn(t *testing.T) {
	reg := registryserver.StartTLS(t)
	reg.PushImage(t, "team/app", time.Now(), "1.0.0")
	ctx := context.Background()
	image := reg.Host + "/team/app"
	creds := Credentials{Username: reg.Username, Password: reg.Password}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(reg.CA) {
		t.Fatal("the registry's certificate is not PEM")
	}
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
		ok   bool
	}{
		{"the system's authorities", nil, false},
		{"the registry's authority", &tls.Config{RootCAs: pool}, true},
		{"no verification", &tls.Config{InsecureSkipVerify: true}, true},
	} {
		c := New(Options{TLS: func(host string) *tls.Config {
			if host == reg.Host {
				return tc.cfg
			}
			return nil
		}})
		list, err := c.Tags(ctx, image, creds)
		if tc.ok && (err != nil || !slices.Equal(list, []string{"1.0.0"})) {
			t.Errorf("%s: %v %v", tc.name, list, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "certificate")) {
			t.Errorf("%s: %v %v, want a certificate error", tc.name, list, err)
		}
	}
}
