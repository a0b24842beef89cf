package ui_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/capstan-cd/capstan/internal/server/ui"
)

// The UI under a base href: every page path answers the one page, whose
// base points the script's relative API calls under the prefix; assets are
// served compressed and cached for good under the directory their hash
// names, which the page points to.
func ExampleNew() {
	h, err := ui.New(ui.Options{BaseHref: "/cd"})
	if err != nil {
		fmt.Println(err)
		return
	}
	page := httptest.NewRecorder()
	h.ServeHTTP(page, httptest.NewRequest("GET", "/applications/argocd/guestbook", nil))
	fmt.Println(page.Code, page.Header().Get("Content-Type"), strings.Contains(page.Body.String(), `<base href="/cd/">`))

	asset := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/"+h.AssetPath("main.js"), nil)
	req.Header.Set("Accept-Encoding", "gzip")
	h.ServeHTTP(asset, req)
	fmt.Println(asset.Code, asset.Header().Get("Content-Encoding"), asset.Header().Get("Cache-Control"),
		strings.Contains(page.Body.String(), `src="`+h.AssetPath("main.js")+`"`))

	stale := httptest.NewRecorder()
	h.ServeHTTP(stale, httptest.NewRequest("GET", "/assets/0123456789abcdef/main.js", nil))
	fmt.Println(stale.Code)
	// Output:
	// 200 text/html; charset=utf-8 true
	// 200 gzip public, max-age=31536000, immutable true
	// 404
}
