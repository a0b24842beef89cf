package archive

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name, link, body string
	kind             byte
}

func tarOf(t *testing.T, entries ...entry) *bytes.Buffer {
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
