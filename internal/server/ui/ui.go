// Package ui is Capstan's web UI: a single-page app (plain JavaScript
// modules, one per page, and one style sheet, no build step) embedded in
// the binary and served by the API server beside /api on its one port. The page calls the same API
// as the CLI with the session cookie, so RBAC, errors and limits are the
// API's own.
//
// Assets are compressed once at start and served under a directory named
// by the hash of them all (/assets/<hash>/main.js), cached for a year: the
// modules import each other by relative paths, so a new binary's page
// loads every module anew and an old page never mixes in a new module. The
// page itself is never cached, and preloads every module at once. Every GET that is not an
// asset answers the page, whose script routes by the URL (/login,
// /applications, /applications/<namespace>/<name>); BaseHref puts the UI
// under a prefix behind a reverse proxy (Argo CD's server.basehref).
package ui

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
)

//go:embed static
var embedded embed.FS

// Options shape the UI.
type Options struct {
	// BaseHref is the path the UI is served under behind a reverse proxy
	// that strips it ("/cd" or "/cd/"). Default "/".
	BaseHref string
	// XFrameOptions is the page's X-Frame-Options header, as Argo CD's
	// server.x.frame.options. Default DefaultXFrameOptions; "-": none.
	XFrameOptions string
	// ContentSecurityPolicy is the page's Content-Security-Policy header,
	// as Argo CD's server.content.security.policy. Default
	// DefaultContentSecurityPolicy, which allows only the UI's own files;
	// "-": none.
	ContentSecurityPolicy string
	// ExtensionsDir is where UI extensions are read from (see
	// serveExtensions). Default: none; `capstan server` reads
	// DefaultExtensionsDir, as Argo CD's server does.
	ExtensionsDir string
	// StaticAssetsDir is a directory whose files are served beside the
	// UI's own at their paths (a style sheet ui.cssurl names), as Argo
	// CD's server.staticassets; one that does not exist is left out.
	// Default: none; `capstan server` reads DefaultStaticAssetsDir.
	StaticAssetsDir string
	// Log hears of a missing StaticAssetsDir. Default: slog's default.
	Log *slog.Logger
}

// The page's default framing and content policies.
const (
	DefaultXFrameOptions         = "sameorigin"
	DefaultContentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'self'"
)

// asset is one embedded file, ready to serve.
type asset struct {
	contentType string
	plain, gz   []byte
	hash        string
}

// Handler serves the UI.
type Handler struct {
	assets  map[string]*asset // by name under static/
	version string            // the hash of all assets, their directory
	page    []byte
	headers map[string]string // set on the page
	extDir  string            // Options.ExtensionsDir
	static  *staticDir        // Options.StaticAssetsDir, if it exists
}

// New reads and compresses the embedded assets and renders the page.
func New(opts Options) (*Handler, error) {
	base := opts.BaseHref
	if base == "" {
		base = "/"
	}
	// Argo CD takes "/cd" as well as "/cd/".
	base = "/" + strings.Trim(base, "/") + "/"
	if base == "//" {
		base = "/"
	}
	if strings.ContainsAny(base, `"<>\?#`) {
		return nil, fmt.Errorf("invalid base href %q", opts.BaseHref)
	}
	static, err := openStaticDir(opts.StaticAssetsDir, cmp.Or(opts.Log, slog.Default()))
	if err != nil {
		return nil, err
	}
	h := &Handler{assets: map[string]*asset{}, headers: map[string]string{}, extDir: opts.ExtensionsDir, static: static}
	for name, value := range map[string]string{
		"X-Frame-Options":         cmp.Or(opts.XFrameOptions, DefaultXFrameOptions),
		"Content-Security-Policy": cmp.Or(opts.ContentSecurityPolicy, DefaultContentSecurityPolicy),
	} {
		if value != "-" {
			h.headers[name] = value
		}
	}
	err = fs.WalkDir(embedded, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := embedded.ReadFile(p)
		if err != nil {
			return err
		}
		a, err := newAsset(p, data)
		if err != nil {
			return err
		}
		h.assets[strings.TrimPrefix(p, "static/")] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	h.version = version(h.assets)
	page, err := h.renderPage(base)
	if err != nil {
		return nil, err
	}
	h.page = page
	return h, nil
}

func newAsset(name string, data []byte) (*asset, error) {
	var gz bytes.Buffer
	w, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	return &asset{contentType: ct, plain: data, gz: gz.Bytes(), hash: hex.EncodeToString(sum[:8])}, nil
}

// version hashes the assets' names and contents together.
func version(assets map[string]*asset) string {
	sum := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(assets)) {
		fmt.Fprintf(sum, "%s\x00%s\x00", name, assets[name].hash)
	}
	return hex.EncodeToString(sum.Sum(nil)[:8])
}

// AssetPath is where the asset name is served, relative to the base.
func (h *Handler) AssetPath(name string) string {
	return "assets/" + h.version + "/" + name
}

// pageTemplate is the one HTML page.
var pageTemplate = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="{{.Base}}">
<title>Capstan</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{{.Dir}}style.css">
{{range .Modules}}<link rel="modulepreload" href="{{$.Dir}}{{.}}">
{{end}}<script type="module" src="{{.Dir}}main.js"></script>
<script defer src="extensions.js"></script>
</head>
<body>
<noscript>Capstan's UI needs JavaScript.</noscript>
<div id="app" aria-live="polite"></div>
</body>
</html>
`))

func (h *Handler) renderPage(base string) ([]byte, error) {
	var b bytes.Buffer
	var modules []string
	for _, name := range slices.Sorted(maps.Keys(h.assets)) {
		if path.Ext(name) == ".js" && name != "main.js" {
			modules = append(modules, name)
		}
	}
	err := pageTemplate.Execute(&b, map[string]any{"Base": base, "Dir": h.AssetPath(""), "Modules": modules})
	return b.Bytes(), err
}

// ServeHTTP answers assets under /assets/<version>/ and the page for any other GET
// or HEAD. Paths of the API are the caller's to route away first.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.URL.Path == "/extensions.js" {
		serveExtensions(h.extDir, w)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/assets/"); ok {
		// Only the current version is served: an asset of another
		// binary's cached for a year under this one's name would mix
		// versions.
		dir, name, _ := strings.Cut(rest, "/")
		a := h.assets[name]
		if dir != h.version || a == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("ETag", `"`+a.hash+`"`)
		serve(w, r, a.contentType, a.plain, a.gz)
		return
	}
	if h.static.serve(w, r) {
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	for k, v := range h.headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(h.page)
}

// serve writes the gzip form to clients that take it.
func serve(w http.ResponseWriter, r *http.Request, contentType string, plain, gz []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Vary", "Accept-Encoding")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(gz)
		return
	}
	_, _ = w.Write(plain)
}
