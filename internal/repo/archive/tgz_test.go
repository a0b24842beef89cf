package archive

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTgzRoundTrip(t *testing.T) {
	src := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app/config.yaml", "a: 1\n")
	write("app/secret.key", "hidden")
	write("vendor/big/blob", "x")
	if err := os.Symlink("config.yaml", filepath.Join(src, "app", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := Tgz(&buf, src, PackOptions{MaxBytes: 1 << 20, Exclude: []string{"vendor", "*/*.key"}})
	if err != nil || n != 1 {
		t.Fatalf("Tgz = %d, %v; want 1 file", n, err)
	}
	gz, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := Untar(gz, dst, Options{MaxBytes: 1 << 20, Symlinks: true}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dst, "app", "link.yaml")); err != nil || string(data) != "a: 1\n" {
		t.Errorf("link.yaml through its link = %q, %v", data, err)
	}
	for _, gone := range []string{"app/secret.key", "vendor"} {
		if _, err := os.Lstat(filepath.Join(dst, gone)); err == nil {
			t.Errorf("%s was packed despite its exclusion", gone)
		}
	}
}

func TestTgzBounds(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Tgz(&buf, src, PackOptions{MaxBytes: 99}); err == nil || !strings.Contains(err.Error(), "larger than the limit") {
		t.Errorf("100 bytes under a 99-byte limit: %v", err)
	}
	if _, err := Tgz(&buf, src, PackOptions{MaxBytes: 1000, Exclude: []string{"["}}); err == nil {
		t.Error("a malformed glob was accepted")
	}
}

func TestCopy(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "app", "base"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "app", "base", "cm.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("base/cm.yaml", filepath.Join(src, "app", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := Copy(src, dst, 1<<20); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dst, "app", "link.yaml")); err != nil || string(data) != "kind: ConfigMap\n" {
		t.Errorf("the copy's link reads %q, %v", data, err)
	}
	if link, err := os.Readlink(filepath.Join(dst, "app", "link.yaml")); err != nil || link != "base/cm.yaml" {
		t.Errorf("the link was not copied as a link: %q, %v", link, err)
	}
	if st, err := os.Stat(filepath.Join(dst, "run.sh")); err != nil || st.Mode()&0o100 == 0 {
		t.Errorf("run.sh lost its executable bit: %v, %v", st, err)
	}
	if err := Copy(src, filepath.Join(t.TempDir(), "small"), 10); err == nil || !strings.Contains(err.Error(), "larger than the limit") {
		t.Errorf("over the limit: %v", err)
	}
}
