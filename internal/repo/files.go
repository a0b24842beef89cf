package repo

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"os"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/archive"
)

// FilesRenderer renders a source from files a client sent rather than
// from its repository: the tar.gz of a local directory, as Argo CD's CLI
// sends it for app diff --local --server-side-generate.
type FilesRenderer interface {
	RenderFiles(ctx context.Context, req *FilesRequest) (*Response, error)
}

// Bounds of a FilesRequest's archive.
const (
	// MaxFilesArchive bounds the compressed archive the API server takes,
	// and the repo server unless Options.FilesMaxArchiveBytes says otherwise.
	MaxFilesArchive = 16 << 20
	// DefaultFilesMaxExtracted bounds the files it holds, added up,
	// unless Options.FilesMaxExtractedBytes says otherwise: Argo CD's
	// default reposerver.streamed.manifest.max.extracted.size (1G).
	DefaultFilesMaxExtracted int64 = 1 << 30
	// maxFilesEntries bounds its entries.
	maxFilesEntries = 10000
)

// FilesRequest is a source to render from an archive of its directory.
type FilesRequest struct {
	// AppName and Namespace are the Application's name and destination
	// namespace, as in a Request.
	AppName   string `json:"appName"`
	Namespace string `json:"namespace"`
	// Source says how to render (its path and repository are not used:
	// the archive is the source's directory).
	Source v1alpha1.ApplicationSource `json:"source"`
	// Archive is the gzip-compressed tar of the directory, at most
	// Options.FilesMaxArchiveBytes; links are refused.
	Archive []byte `json:"archive"`
}

// RenderFiles implements FilesRenderer: the archive is unpacked into a
// directory of its own (bounded in size and entries, nothing outside it,
// no links) and rendered as the source's directory.
func (s *Service) RenderFiles(ctx context.Context, req *FilesRequest) (*Response, error) {
	if limit := cmp.Or(s.opts.FilesMaxArchiveBytes, MaxFilesArchive); int64(len(req.Archive)) > limit {
		return nil, fmt.Errorf("the archive is larger than the limit of %d bytes", limit)
	}
	zr, err := gzip.NewReader(bytes.NewReader(req.Archive))
	if err != nil {
		return nil, fmt.Errorf("reading the archive: %w", err)
	}
	if err := os.MkdirAll(s.opts.Root, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(s.opts.Root, "files-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := archive.Untar(zr, dir, archive.Options{MaxBytes: cmp.Or(s.opts.FilesMaxExtractedBytes, DefaultFilesMaxExtracted), MaxEntries: maxFilesEntries}); err != nil {
		return nil, fmt.Errorf("unpacking the archive: %w", err)
	}
	src := req.Source
	src.Path, src.Chart = ".", ""
	return s.RenderLocal(ctx, dir, src, &Request{AppName: req.AppName, Namespace: req.Namespace})
}
