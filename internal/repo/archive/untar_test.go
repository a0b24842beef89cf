package archive

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type entry struct {
	name, link, body string
	kind             byte
}

func tarOf(t testing.TB, entries ...entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.kind, Mode: 0o644, Size: int64(len(e.body))}
		if e.kind == 0 {
			h.Typeflag = tar.TypeReg
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func TestUntar(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []entry
		opts    Options
		wantErr string
	}{
		{name: "files", entries: []entry{{name: "a/b.yaml", body: "x: 1"}}, opts: Options{MaxBytes: 10}},
		{name: "climbs out", entries: []entry{{name: "../evil", body: "x"}}, opts: Options{MaxBytes: 10}, wantErr: "escapes"},
		{name: "absolute", entries: []entry{{name: "/etc/evil", body: "x"}}, opts: Options{MaxBytes: 10}, wantErr: "escapes"},
		{name: "too large", entries: []entry{{name: "a", body: "0123456789ab"}}, opts: Options{MaxBytes: 10}, wantErr: "larger than"},
		{name: "too many", entries: []entry{{name: "a"}, {name: "b"}, {name: "c"}}, opts: Options{MaxBytes: 10, MaxEntries: 2}, wantErr: "more than 2"},
		{name: "a link then a file through it", entries: []entry{{name: "d", link: "/tmp", kind: tar.TypeSymlink}, {name: "d/x", body: "x"}},
			opts: Options{MaxBytes: 10}, wantErr: "is a link"},
		{name: "a hard link", entries: []entry{{name: "h", link: "/etc/passwd", kind: tar.TypeLink}}, opts: Options{MaxBytes: 10, Symlinks: true}, wantErr: "is a link"},
		{name: "a kept link then a file through it", entries: []entry{{name: "a", link: "/tmp", kind: tar.TypeSymlink}, {name: "a/x", body: "x"}},
			opts: Options{MaxBytes: 10, Symlinks: true}, wantErr: "beneath the symbolic link"},
		{name: "a kept link inside then a file through it", entries: []entry{{name: "d/", kind: tar.TypeDir}, {name: "a", link: "d", kind: tar.TypeSymlink}, {name: "a/x", body: "x"}},
			opts: Options{MaxBytes: 10, Symlinks: true}, wantErr: "beneath the symbolic link"},
		{name: "a link then the same name as a file", entries: []entry{{name: "a", link: "/tmp/x", kind: tar.TypeSymlink}, {name: "a", body: "x"}},
			opts: Options{MaxBytes: 10, Symlinks: true}, wantErr: "appears twice"},
		{name: "a file named twice", entries: []entry{{name: "a", body: "x"}, {name: "./a", body: "y"}}, opts: Options{MaxBytes: 10}, wantErr: "appears twice"},
		{name: "a file beneath a file", entries: []entry{{name: "a", body: "x"}, {name: "a/b", body: "y"}}, opts: Options{MaxBytes: 10}, wantErr: "beneath the file"},
		{name: "the directory itself", entries: []entry{{name: "./", kind: tar.TypeDir}, {name: "./a", body: "x"}}, opts: Options{MaxBytes: 10}},
		{name: "a file named .", entries: []entry{{name: ".", body: "x"}}, opts: Options{MaxBytes: 10}, wantErr: "escapes"},
		{name: "a directory named twice", entries: []entry{{name: "d/", kind: tar.TypeDir}, {name: "d/x", body: "x"}, {name: "d/", kind: tar.TypeDir}}, opts: Options{MaxBytes: 10}},
		{name: "a .git path", entries: []entry{{name: ".git/config", body: "x"}}, opts: Options{MaxBytes: 10}, wantErr: ".git directory"},
		{name: "a .GIT path deeper", entries: []entry{{name: "a/.GIT/hooks/x", body: "x"}}, opts: Options{MaxBytes: 10}, wantErr: ".git directory"},
		{name: "a .git path kept", entries: []entry{{name: ".git/config", body: "x"}}, opts: Options{MaxBytes: 10, GitDirs: true}},
		{name: "a symbolic link kept", entries: []entry{{name: "l", link: "a", kind: tar.TypeSymlink}}, opts: Options{MaxBytes: 10, Symlinks: true}},
	} {
		dir := t.TempDir()
		err := Untar(tarOf(t, tc.entries...), dir, tc.opts)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	dir := t.TempDir()
	if err := Untar(tarOf(t, entry{name: "a/b.yaml", body: "x: 1"}), dir, Options{MaxBytes: 10}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a", "b.yaml")); err != nil || string(data) != "x: 1" {
		t.Errorf("the extracted file: %q %v", data, err)
	}
}

// TestUntarWritesNothingOutside is finding 1 of the tenant review: a tree
// holding a link out of the checkout and then a file through it (or the
// link's name again) leaves nothing outside the directory.
func TestUntarWritesNothingOutside(t *testing.T) {
	for _, entries := range [][]entry{
		{{name: "a", link: "OUT", kind: tar.TypeSymlink}, {name: "a/x", body: "pwned"}},
		{{name: "a", link: "OUT/x", kind: tar.TypeSymlink}, {name: "a", body: "pwned"}},
		{{name: "a", link: "../../OUT", kind: tar.TypeSymlink}, {name: "a/x", body: "pwned"}},
	} {
		outside := t.TempDir()
		for i := range entries {
			entries[i].link = strings.ReplaceAll(entries[i].link, "OUT", outside)
		}
		if err := Untar(tarOf(t, entries...), filepath.Join(t.TempDir(), "checkout"), Options{MaxBytes: 100, Symlinks: true}); err == nil {
			t.Errorf("%v: extracted", entries)
		}
		if left, _ := os.ReadDir(outside); len(left) != 0 {
			t.Errorf("%v: wrote %s outside the checkout", entries, left[0].Name())
		}
	}
}

// BenchmarkUntarMonorepo extracts a Git archive of a monorepo: 1,000
// directories of one small file each, as git archive orders them.
//
//	go test ./internal/repo/archive -run '^$' -bench UntarMonorepo
func BenchmarkUntarMonorepo(b *testing.B) {
	var entries []entry
	entries = append(entries, entry{name: "apps/", kind: tar.TypeDir})
	for i := range 1000 {
		dir := "apps/app-" + strings.Repeat("0", 4-len(strconv.Itoa(i))) + strconv.Itoa(i) + "/"
		entries = append(entries, entry{name: dir, kind: tar.TypeDir},
			entry{name: dir + "cm.yaml", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  value: one\n"})
	}
	data := tarOf(b, entries...).Bytes()
	b.ResetTimer()
	for i := range b.N {
		dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
		if err := Untar(bytes.NewReader(data), dir, Options{MaxBytes: 1 << 30}); err != nil {
			b.Fatal(err)
		}
	}
}
