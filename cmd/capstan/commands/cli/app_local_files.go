package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/repo"
)

// serverManifests sends the files of dir whose names match includes to
// the server, which renders them as the Application's source directory
// (Argo CD's GetManifestsWithFiles: a query, then the tar.gz in chunks),
// and returns the manifests.
func serverManifests(ctx context.Context, c *apiclient.Client, name, dir string, includes []string) ([]string, error) {
	archive, err := tarGzip(dir, includes)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(archive)
	ns, bare, qualifiedName := strings.Cut(name, "/")
	if !qualifiedName {
		ns, bare = "", name
	}
	var stream bytes.Buffer
	enc := json.NewEncoder(&stream)
	_ = enc.Encode(map[string]any{"query": map[string]string{"name": bare, "appNamespace": ns, "checksum": hex.EncodeToString(sum[:])}})
	for chunk := range slices.Chunk(archive, 1<<20) {
		_ = enc.Encode(map[string]any{"chunk": map[string][]byte{"chunk": chunk}})
	}
	var resp struct{ Manifests []string }
	if err := c.DoRaw(ctx, "POST", "/api/v1/applications/manifestsWithFiles", "application/json", stream.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("rendering %s on the server: %w", dir, err)
	}
	return resp.Manifests, nil
}

// tarGzip packs dir's regular files whose names match a pattern of
// includes into a tar.gz, at most repo.MaxFilesArchive bytes.
func tarGzip(dir string, includes []string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !slices.ContainsFunc(includes, func(p string) bool { ok, _ := filepath.Match(p, d.Name()); return ok }) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
		files++
		if buf.Len() > repo.MaxFilesArchive {
			return fmt.Errorf("the files of %s are over the limit of %d bytes compressed", dir, repo.MaxFilesArchive)
		}
		return nil
	})
	if err == nil && files == 0 {
		err = fmt.Errorf("no file of %s matches %v", dir, includes)
	}
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
