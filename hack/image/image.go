package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Options say what Build makes.
type Options struct {
	// Binary is the capstan binary (linux, for the host's architecture).
	Binary string
	// Out receives oci/ (an OCI image layout) and capstan.tar (for
	// `docker load`). Default: bin/image.
	Out string
	// Tag is the image's tag. Default: latest.
	Tag string
	// Push, when set, is a reference the image is pushed to, with the
	// credentials of the Docker configuration.
	Push string
	// Programs are other programs capstan runs (Dex), put in
	// /usr/local/bin under their own names.
	Programs []string
}

// Repository is the image's name in the install manifests.
const Repository = "ghcr.io/capstan-cd/capstan"

// commandNames are linked to capstan in /usr/local/bin: the names Argo
// CD's manifests run it by.
var commandNames = []string{"argocd", "argocd-server", "argocd-repo-server", "argocd-application-controller", "argocd-dex", "argocd-applicationset-controller", "argocd-notifications", "argocd-image-updater", "argocd-k8s-auth"}

// Build makes the image (see the package documentation).
func Build(ctx context.Context, o Options) error {
	if o.Out == "" {
		o.Out = "bin/image"
	}
	if o.Tag == "" {
		o.Tag = "latest"
	}
	if o.Binary == "" {
		return fmt.Errorf("-binary: the capstan binary to put in the image")
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	rootfs := filepath.Join(o.Out, "rootfs.tar")
	if err := makeRootFS(ctx, rootfs); err != nil {
		return err
	}
	defer os.Remove(rootfs)
	img, err := assemble(rootfs, o.Binary, o.Programs)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(Repository + ":" + o.Tag)
	if err != nil {
		return err
	}
	if err := writeLayout(filepath.Join(o.Out, "oci"), img, ref); err != nil {
		return err
	}
	if err := tarball.WriteToFile(filepath.Join(o.Out, "capstan.tar"), ref, img); err != nil {
		return fmt.Errorf("writing capstan.tar: %w", err)
	}
	if o.Push != "" {
		return push(ctx, img, o.Push)
	}
	return nil
}

// push writes img to the registry reference ref names, with the
// credentials of the Docker configuration.
func push(ctx context.Context, img v1.Image, ref string) error {
	dst, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("-push %q: %w", ref, err)
	}
	if err := remote.Write(dst, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("pushing %s: %w", dst, err)
	}
	return nil
}

// assemble stacks the root file system and the binary into an OCI image
// that runs as the argocd user.
func assemble(rootfs, binary string, programs []string) (v1.Image, error) {
	// Compressed once, kept for the layout, the tarball and the push.
	base, err := tarball.LayerFromFile(rootfs, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching, tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return nil, fmt.Errorf("root file system layer: %w", err)
	}
	binLayer, err := binaryLayer(binary, programs)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, base, binLayer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Created = v1.Time{Time: created()}
	cfg.Config.User = fmt.Sprintf("%d:%d", userID, userID)
	cfg.Config.WorkingDir = homeDir
	cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + homeDir}
	cfg.Config.Cmd = []string{"capstan"}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":  "capstan",
		"org.opencontainers.image.source": "https://github.com/capstan-cd/capstan",
	}
	return mutate.ConfigFile(img, cfg)
}

// binaryLayer holds the binary and, linked to it, the command names Argo
// CD's manifests use, which it dispatches on; and the other programs.
func binaryLayer(binary string, programs []string) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mod := created()
	for _, dir := range []string{"usr/", "usr/local/", "usr/local/bin/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: mod}); err != nil {
			return nil, err
		}
	}
	for _, path := range append([]string{binary}, programs...) {
		name := filepath.Base(path)
		if path == binary {
			name = "capstan"
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "usr/local/bin/" + name, Mode: 0o755, Size: int64(len(data)), ModTime: mod}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	for _, n := range commandNames {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "usr/local/bin/" + n, Linkname: "capstan", Mode: 0o777, ModTime: mod}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layer)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// writeLayout writes img into an OCI image layout at dir, named ref.
func writeLayout(dir string, img v1.Image, ref name.Tag) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.String()}))
}

// created is the image's creation time: SOURCE_DATE_EPOCH when set, for
// builds that come out the same each time.
func created() time.Time {
	if s, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil {
		return time.Unix(s, 0).UTC()
	}
	return time.Now().UTC().Truncate(time.Second)
}
