package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path"
	"strings"
)

// DefaultStaticAssetsDir is where Argo CD's API server looks for files
// added to its UI's (server.staticassets): a style sheet that argocd-cm's
// ui.cssurl names, a logo, mounted from a volume.
const DefaultStaticAssetsDir = "/shared/app"

// staticDir serves the files of a directory beside the built-in UI, each
// read through an os.Root so that no path or symbolic link leads out of
// it.
type staticDir struct{ root *os.Root }

// openStaticDir opens dir; a directory that does not exist leaves only the
// built-in UI, as in Argo CD, and says so.
func openStaticDir(dir string, log *slog.Logger) (*staticDir, error) {
	if dir == "" {
		return nil, nil
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		log.Info("the static assets directory does not exist: the web UI serves only its own files", "dir", dir)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("static assets directory: %w", err)
	}
	return &staticDir{root: root}, nil
}

// serve answers r with the directory's file of that path, if it has one
// (a regular file; never the page itself), and reports whether it did.
func (d *staticDir) serve(w http.ResponseWriter, r *http.Request) bool {
	if d == nil {
		return false
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" || name == "index.html" {
		return false
	}
	f, err := d.root.Open(name)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, st.ModTime(), f)
	return true
}
