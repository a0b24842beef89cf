package git

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Git's file modes, as a tree object records them.
const (
	modeDir       = 0o040000
	modeSymlink   = 0o120000
	modeSubmodule = 0o160000
	modeTypeMask  = 0o170000
)

// tree is a parsed tree object: its entries sorted by name.
type tree struct {
	entries []treeEntry
	size    int64 // of the object
}

// treeEntry is one name in a tree.
type treeEntry struct {
	name string
	mode uint32
	id   string
}

// parseTree reads a raw tree object: entries of "<octal mode> <name>\0"
// followed by the object id in hashLen bytes.
func parseTree(data []byte, hashLen int) (*tree, error) {
	t := &tree{size: int64(len(data))}
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp <= 0 || nul < sp || len(data) < nul+1+hashLen {
			return nil, errors.New("malformed tree object")
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, errors.New("malformed mode in tree object")
		}
		name := string(data[sp+1 : nul])
		if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
			return nil, fmt.Errorf("tree object names an entry %q", name)
		}
		t.entries = append(t.entries, treeEntry{
			name: name,
			mode: uint32(mode),
			id:   hex.EncodeToString(data[nul+1 : nul+1+hashLen]),
		})
		data = data[nul+1+hashLen:]
	}
	// Git sorts a directory as if its name ended in '/'; readers of a file
	// system expect plain name order.
	slices.SortFunc(t.entries, func(a, b treeEntry) int { return strings.Compare(a.name, b.name) })
	return t, nil
}

func (t *tree) lookup(name string) (treeEntry, bool) {
	i, ok := slices.BinarySearchFunc(t.entries, name, func(e treeEntry, name string) int { return strings.Compare(e.name, name) })
	if !ok {
		return treeEntry{}, false
	}
	return t.entries[i], true
}

func (e treeEntry) isDir() bool { return e.mode&modeTypeMask == modeDir }

func (e treeEntry) fileMode() fs.FileMode {
	switch e.mode & modeTypeMask {
	case modeDir:
		return fs.ModeDir | 0o755
	case modeSymlink:
		return fs.ModeSymlink | 0o777
	case modeSubmodule:
		return fs.ModeIrregular
	}
	if e.mode&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// Tree returns the files of commit sha (a full SHA) as a read-only file
// system read straight from the clone's objects, without a checkout: what
// a source that only reads a few files needs, at the cost of a round trip
// per file. Files are read only up to maxFile bytes (ErrTooLarge beyond).
// Reading through a symbolic link or a submodule fails with
// ErrNeedsCheckout. The commit is fetched when the clone lacks it; ctx
// bounds every read made through the returned file system.
func (r *Repo) Tree(ctx context.Context, sha string, maxFile int64) (fs.FS, error) {
	if !fullSHA.MatchString(sha) {
		return nil, fmt.Errorf("reading %s needs a full commit SHA, got %q", RedactURL(r.url), sha)
	}
	objs := r.objectReader()
	root, err := objs.commitTree(ctx, sha)
	if err != nil && ctx.Err() == nil { // not fetched yet, or no clone at all yet
		if err = r.ensureCommit(ctx, sha); err != nil {
			return nil, err
		}
		objs.reset()
		root, err = objs.commitTree(ctx, sha)
	}
	if err != nil {
		return nil, fmt.Errorf("reading commit %s of %s: %w", sha, RedactURL(r.url), err)
	}
	return &treeFS{ctx: ctx, objs: objs, root: root, maxFile: maxFile}, nil
}

func (r *Repo) objectReader() *objectReader {
	r.objectsOnce.Do(func() { r.objects = newObjectReader(r.opts.GitBinary, r.bareDir()) })
	return r.objects
}

// treeFS is one commit's files: an fs.FS over its tree objects.
type treeFS struct {
	ctx     context.Context
	objs    *objectReader
	root    string
	maxFile int64
}

// entry walks name down from the root tree.
func (t *treeFS) entry(op, name string) (treeEntry, error) {
	if !fs.ValidPath(name) {
		return treeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	e := treeEntry{name: ".", mode: modeDir, id: t.root}
	if name == "." {
		return e, nil
	}
	for part := range strings.SplitSeq(name, "/") {
		switch {
		case e.mode&modeTypeMask == modeSymlink || e.mode&modeTypeMask == modeSubmodule:
			return treeEntry{}, &fs.PathError{Op: op, Path: name, Err: ErrNeedsCheckout}
		case !e.isDir():
			return treeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		dir, err := t.objs.tree(t.ctx, e.id)
		if err != nil {
			return treeEntry{}, &fs.PathError{Op: op, Path: name, Err: err}
		}
		found, ok := dir.lookup(part)
		if !ok {
			return treeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		e = found
	}
	return e, nil
}

// followable is entry for an operation that follows symbolic links.
func (t *treeFS) followable(op, name string) (treeEntry, error) {
	e, err := t.entry(op, name)
	if err == nil && (e.mode&modeTypeMask == modeSymlink || e.mode&modeTypeMask == modeSubmodule) {
		return e, &fs.PathError{Op: op, Path: name, Err: ErrNeedsCheckout}
	}
	return e, err
}

// Stat implements fs.StatFS.
func (t *treeFS) Stat(name string) (fs.FileInfo, error) {
	e, err := t.followable("stat", name)
	if err != nil {
		return nil, err
	}
	return t.info(e, name)
}

func (t *treeFS) info(e treeEntry, name string) (fs.FileInfo, error) {
	fi := &fileInfo{name: pathBase(name), mode: e.fileMode()}
	if e.isDir() || e.mode&modeTypeMask == modeSubmodule {
		return fi, nil
	}
	obj, err := t.objs.read(t.ctx, e.id, false, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	fi.size = obj.size
	return fi, nil
}

// ReadFile implements fs.ReadFileFS.
func (t *treeFS) ReadFile(name string) ([]byte, error) {
	e, err := t.followable("read", name)
	if err != nil {
		return nil, err
	}
	if e.isDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	obj, err := t.objs.read(t.ctx, e.id, true, t.maxFile)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return obj.data, nil
}

// ReadDir implements fs.ReadDirFS: entries sorted by name.
func (t *treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	e, err := t.followable("readdir", name)
	if err != nil {
		return nil, err
	}
	if !e.isDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	dir, err := t.objs.tree(t.ctx, e.id)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	out := make([]fs.DirEntry, len(dir.entries))
	for i, entry := range dir.entries {
		out[i] = dirEntry{fs: t, entry: entry, path: pathJoin(name, entry.name)}
	}
	return out, nil
}

// Open implements fs.FS.
func (t *treeFS) Open(name string) (fs.File, error) {
	e, err := t.followable("open", name)
	if err != nil {
		return nil, err
	}
	info, err := t.info(e, name)
	if err != nil {
		return nil, err
	}
	if e.isDir() {
		entries, err := t.ReadDir(name)
		if err != nil {
			return nil, err
		}
		return &openDir{info: info, entries: entries}, nil
	}
	data, err := t.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &openFile{info: info, Reader: bytes.NewReader(data)}, nil
}

func pathJoin(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

func pathBase(name string) string { return name[strings.LastIndexByte(name, '/')+1:] }

// dirEntry is a name of a directory listing; its Info describes the entry
// itself, symbolic links included, as fs.DirEntry requires.
type dirEntry struct {
	fs    *treeFS
	entry treeEntry
	path  string
}

func (d dirEntry) Name() string               { return d.entry.name }
func (d dirEntry) IsDir() bool                { return d.entry.isDir() }
func (d dirEntry) Type() fs.FileMode          { return d.entry.fileMode().Type() }
func (d dirEntry) Info() (fs.FileInfo, error) { return d.fs.info(d.entry, d.path) }

// fileInfo describes one entry; a commit's files carry no times.
type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (f *fileInfo) Name() string       { return f.name }
func (f *fileInfo) Size() int64        { return f.size }
func (f *fileInfo) Mode() fs.FileMode  { return f.mode }
func (f *fileInfo) ModTime() time.Time { return time.Time{} }
func (f *fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f *fileInfo) Sys() any           { return nil }

// openFile is an opened file, its contents read whole.
type openFile struct {
	info fs.FileInfo
	*bytes.Reader
}

func (f *openFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *openFile) Close() error               { return nil }

// openDir is an opened directory.
type openDir struct {
	info    fs.FileInfo
	entries []fs.DirEntry
	read    int
}

func (d *openDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *openDir) Close() error               { return nil }
func (d *openDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: errors.New("is a directory")}
}

// ReadDir implements fs.ReadDirFile.
func (d *openDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.read:]
	if n <= 0 {
		d.read = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.read += len(rest)
	return rest, nil
}
