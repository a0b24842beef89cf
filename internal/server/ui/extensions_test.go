package ui_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/server/ui"
)

// TestExtensionsScript: extensions.js is every extension*.js file under
// the directory in the order of their paths, without symbolic links or
// other files; a file that would take it past its bound is named and left
// out; no directory is no extensions; and the page loads it after its
// modules.
func TestExtensionsScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b/extension-b.js", "b();")
	write("a/extension.js", "a();")
	write("a/vendor.js", "vendor();")
	write("c/extension-big.js", strings.Repeat("x", ui.MaxExtensionsBytes))
	if err := os.Symlink(filepath.Join(dir, "a", "extension.js"), filepath.Join(dir, "extension-link.js")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want string
	}{
		{dir, "// extension a/extension.js\na();\n;\n// extension b/extension-b.js\nb();\n;\n" +
			`// extension "c/extension-big.js" left out: extensions.js would pass 33554432 bytes` + "\n"},
		{filepath.Join(dir, "missing"), ""},
		{"", ""},
	} {
		h, err := ui.New(ui.Options{ExtensionsDir: tc.dir})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/extensions.js", nil))
		if got := w.Body.String(); got != tc.want || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/javascript") {
			t.Errorf("%q: %s %q, want %q", tc.dir, w.Header().Get("Content-Type"), got, tc.want)
		}
	}
	h, _ := ui.New(ui.Options{})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	page := w.Body.String()
	if m, e := strings.Index(page, `main.js"></script>`), strings.Index(page, `<script defer src="extensions.js">`); m < 0 || e < m {
		t.Errorf("the page does not load extensions.js after main.js:\n%s", page)
	}
}
