package plugin

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/capstan-cd/capstan/internal/repo/archive"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

// received is a request's files unpacked in the work directory.
type received struct {
	dir     string   // the repository's root
	appPath string   // the source's directory in dir
	env     []string // NAME=value, as the repo server sent them
}

func (r *received) cleanup() { _ = os.RemoveAll(r.dir) }

// receive reads the metadata message and the archive's chunks, checks the
// archive against the announced size and checksum, and unpacks it.
func (s *sidecar) receive(ss grpc.ServerStream, in protoreflect.MessageDescriptor) (*received, error) {
	first := dynamicpb.NewMessage(in)
	if err := ss.RecvMsg(first); err != nil {
		return nil, err
	}
	metaField := in.Fields().ByName("metadata")
	if !first.Has(metaField) {
		return nil, errors.New("the stream does not start with the request's metadata")
	}
	meta := first.Get(metaField).Message()
	size := meta.Get(meta.Descriptor().Fields().ByName("size")).Int()
	if size < 0 || size > s.opts.MaxArchiveBytes {
		return nil, fmt.Errorf("an archive of %d bytes is announced; the limit is %d", size, s.opts.MaxArchiveBytes)
	}
	f, err := os.CreateTemp(s.opts.WorkDir, "archive-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
	sum, err := receiveChunks(ss, in, f, size)
	if err != nil {
		return nil, err
	}
	if sum != meta.Get(meta.Descriptor().Fields().ByName("checksum")).String() {
		return nil, errors.New("file checksum validation error")
	}
	dir, err := os.MkdirTemp(s.opts.WorkDir, "source-")
	if err != nil {
		return nil, err
	}
	req := &received{dir: dir, env: envOf(meta)}
	if err := s.unpack(f, req, meta.Get(meta.Descriptor().Fields().ByName("appRelPath")).String()); err != nil {
		req.cleanup()
		return nil, err
	}
	return req, nil
}

// receiveChunks writes the file messages to w, refusing more than size
// bytes, and returns their SHA-256.
func receiveChunks(ss grpc.ServerStream, in protoreflect.MessageDescriptor, w io.Writer, size int64) (string, error) {
	hash := sha256.New()
	fileField := in.Fields().ByName("file")
	var total int64
	for {
		m := dynamicpb.NewMessage(in)
		err := ss.RecvMsg(m)
		if errors.Is(err, io.EOF) {
			return hex.EncodeToString(hash.Sum(nil)), nil
		}
		if err != nil {
			return "", err
		}
		if !m.Has(fileField) {
			return "", errors.New("stream request file is nil")
		}
		f := m.Get(fileField).Message()
		chunk := f.Get(f.Descriptor().Fields().ByName("chunk")).Bytes()
		if total += int64(len(chunk)); total > size {
			return "", fmt.Errorf("the archive is larger than the %d bytes announced", size)
		}
		_, _ = hash.Write(chunk)
		if _, err := w.Write(chunk); err != nil {
			return "", err
		}
	}
}

// unpack writes the archive into req.dir, refuses links out of it and
// finds the source's directory.
func (s *sidecar) unpack(f *os.File, req *received, appRelPath string) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("reading the archive: %w", err)
	}
	if err := archive.Untar(gz, req.dir, archive.Options{MaxBytes: s.opts.MaxArchiveBytes, Symlinks: true, GitDirs: true}); err != nil {
		return fmt.Errorf("unpacking the archive: %w", err)
	}
	if err := pathsafe.CheckTree(req.dir, req.dir); err != nil {
		return err
	}
	if req.appPath, err = pathsafe.Join(req.dir, appRelPath); err != nil {
		return fmt.Errorf("illegal appPath: %w", err)
	}
	if s.opts.Config.Spec.PreserveFileMode {
		return nil
	}
	return plainModes(req.dir)
}

// plainModes makes every file of dir 0644, as Argo CD's sidecars unpack
// sources unless the plugin sets preserveFileMode.
func plainModes(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		return os.Chmod(path, 0o644)
	})
}

func envOf(meta protoreflect.Message) []string {
	list := meta.Get(meta.Descriptor().Fields().ByName("env")).List()
	out := make([]string, 0, list.Len())
	for i := 0; i < list.Len(); i++ {
		e := list.Get(i).Message()
		name := e.Get(e.Descriptor().Fields().ByName("name")).String()
		if name != "" {
			out = append(out, name+"="+e.Get(e.Descriptor().Fields().ByName("value")).String())
		}
	}
	return out
}
