package ui_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/capstan-cd/capstan/internal/server/ui"
)

// The UI under a base href: every page path answers the one page, whose
// base points the script's relative API calls under the prefix; assets are
// served compressed and cached for good.
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
	req := httptest.NewRequest("GET", "/assets/app.js", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	h.ServeHTTP(asset, req)
	fmt.Println(asset.Code, asset.Header().Get("Content-Encoding"), asset.Header().Get("Cache-Control"))
	// Output:
	// 200 text/html; charset=utf-8 true
	// 200 gzip public, max-age=31536000, immutable
}
