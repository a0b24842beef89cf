package repo

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestSubmodulesAreRendered: with Submodules (Argo CD's default), a
// source's submodules are in its checkout, so a recursive directory
// renders their manifests; without it, they are not fetched.
func TestSubmodulesAreRendered(t *testing.T) {
	srv := gitserver.New(t)
	lib := srv.NewRepo(t, "lib")
	libSHA := lib.Commit(t, "lib", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-lib}\n"})
	app := srv.NewRepo(t, "app")
	app.CommitRaw(t, "main",
		gitserver.RawEntry{Name: ".gitmodules", Body: "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib.git\n"},
		gitserver.RawEntry{Name: "lib", Gitlink: libSHA},
		gitserver.RawEntry{Name: "own.yaml", Body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own}\n"})
	creds := credsByURL{app.URL: git.Creds{Username: srv.Username, Password: srv.Password}}
	src := v1alpha1.ApplicationSource{RepoURL: app.URL, Path: ".", TargetRevision: "main",
		Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true}}
	for _, tt := range []struct {
		submodules bool
		want       string
	}{{true, "ConfigMap/from-lib ConfigMap/own"}, {false, "ConfigMap/own"}} {
		svc := NewService(Options{Root: t.TempDir(), Credentials: creds, Submodules: tt.submodules})
		resp, err := svc.Render(context.Background(), &Request{AppName: "app", Sources: []v1alpha1.ApplicationSource{src}})
		if err != nil {
			t.Fatalf("submodules %v: %v", tt.submodules, err)
		}
		got := names(resp.Objects)
		sort.Strings(got)
		if strings.Join(got, " ") != tt.want {
			t.Errorf("submodules %v: %v, want %s", tt.submodules, got, tt.want)
		}
	}
}
