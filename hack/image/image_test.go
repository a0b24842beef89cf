package main

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/capstan-cd/capstan/internal/testing/dexserver"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// TestImage builds the image as make image does, unpacks its layers and
// runs programs inside it (chroot, as the image's user): capstan under
// its own name and under an Argo CD component's name, and git reaching
// the test Git server.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capstan and a root file system")
	}
	if os.Getuid() != 0 {
		t.Skip("building a root file system and chrooting into it need root")
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "capstan")
	// The build settings of the other tests that build capstan, so the
	// build cache serves them all; make image links it statically.
	build := exec.Command("go", "build", "-o", binary, "../../cmd/capstan")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building capstan: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "image")
	if err := Build(context.Background(), Options{Binary: binary, Out: out, Tag: "test", Programs: []string{dexserver.Binary(t)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "capstan.tar")); err != nil {
		t.Errorf("no tarball: %v", err)
	}

	idx, err := layout.ImageIndexFromPath(filepath.Join(out, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil || len(manifest.Manifests) != 1 {
		t.Fatalf("OCI layout index: %v %+v", err, manifest)
	}
	if ref := manifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; ref != Repository+":test" {
		t.Errorf("image named %q", ref)
	}
	img, err := idx.Image(manifest.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "999:999" {
		t.Errorf("runs as %q, want the non-root argocd user 999:999", cfg.Config.User)
	}
	root := filepath.Join(dir, "root")
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := untar(rc, root); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("chroot", append([]string{"--userspec=999:999", root}, args...)...)
		cmd.Env = cfg.Config.Env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s in the image: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("capstan", "version"); !strings.Contains(out, "capstan") {
		t.Errorf("capstan version printed %q", out)
	}
	if out := run("argocd-server", "--help"); !strings.Contains(out, "--repo-server") {
		t.Errorf("argocd-server is not the API server:\n%s", out)
	}
	if out := run("dex", "version"); !strings.Contains(out, "Dex Version") {
		t.Errorf("Dex in the image printed %q", out)
	}
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "in-image")
	sha := remote.Commit(t, "c", map[string]string{"a.yaml": "a: 1\n"})
	if out := run("git", "ls-remote", srv.AuthURL(remote)); !strings.Contains(out, sha) {
		t.Errorf("git ls-remote in the image printed %q, want %s", out, sha)
	}
}

// TestPush: with REGISTRY=, the image is pushed with the credentials of
// the Docker configuration (a small image here: the registry runs in the
// test, and the real one is large).
func TestPush(t *testing.T) {
	reg := registryserver.Start(t)
	dockerConfig := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(reg.Username + ":" + reg.Password))
	if err := os.WriteFile(filepath.Join(dockerConfig, "config.json"), []byte(`{"auths":{"`+reg.Host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dockerConfig)
	dir := t.TempDir()
	binary := filepath.Join(dir, "capstan")
	if err := os.WriteFile(binary, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	layer, err := binaryLayer(binary, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/team/capstan:test"
	if err := push(context.Background(), img, ref); err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	if got, err := crane.Digest(ref, crane.WithAuth(reg.Auth())); err != nil || got != want.String() {
		t.Errorf("pushed %s: digest %s (%v), want %s", ref, got, err, want)
	}
	if err := push(context.Background(), img, "Not A Reference"); err == nil {
		t.Error("pushing to a malformed reference: no error")
	}
}

// untar writes a flattened image file system into dir, device nodes
// included (git wants /dev/null).
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, mode)
		case tar.TypeReg:
			var f *os.File
			if f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode); err == nil {
				_, err = io.Copy(f, tr)
				err = errors.Join(err, f.Close())
			}
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, path)
		case tar.TypeLink:
			err = os.Link(filepath.Join(dir, filepath.Clean("/"+h.Linkname)), path)
		case tar.TypeChar, tar.TypeBlock:
			kind := uint32(syscall.S_IFCHR)
			if h.Typeflag == tar.TypeBlock {
				kind = syscall.S_IFBLK
			}
			err = syscall.Mknod(path, kind|uint32(mode), int(h.Devmajor<<8|h.Devminor))
		default:
			continue
		}
		if err != nil {
			return err
		}
		if err := os.Lchown(path, h.Uid, h.Gid); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeSymlink {
			if err := os.Chmod(path, os.FileMode(h.Mode)&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky)); err != nil {
				return err
			}
		}
	}
}
