package ui_test

import (
	"net/http/httptest"
	"testing"

	"github.com/capstan-cd/capstan/internal/server/ui"
)

// TestPageHeaders: the page's framing and content policies are Capstan's
// by default, set as argocd-cmd-params-cm's server.x.frame.options and
// server.content.security.policy say, and "-" drops a header.
func TestPageHeaders(t *testing.T) {
	for _, tc := range []struct {
		opts      ui.Options
		xfo, csp  string
		cspAbsent bool
	}{
		{ui.Options{}, ui.DefaultXFrameOptions, ui.DefaultContentSecurityPolicy, false},
		{ui.Options{XFrameOptions: "deny", ContentSecurityPolicy: "frame-ancestors 'self';"}, "deny", "frame-ancestors 'self';", false},
		{ui.Options{ContentSecurityPolicy: "-"}, ui.DefaultXFrameOptions, "", true},
	} {
		h, err := ui.New(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/applications", nil))
		if got := w.Header().Get("X-Frame-Options"); got != tc.xfo {
			t.Errorf("%+v: X-Frame-Options %q, want %q", tc.opts, got, tc.xfo)
		}
		if got, ok := w.Header()["Content-Security-Policy"]; (ok && tc.cspAbsent) || (!tc.cspAbsent && (len(got) != 1 || got[0] != tc.csp)) {
			t.Errorf("%+v: Content-Security-Policy %q, want %q", tc.opts, got, tc.csp)
		}
	}
}
