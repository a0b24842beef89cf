package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/browser"
)

// page is a browser tab on a running Server.
type page struct {
	t   *testing.T
	ctx context.Context
	f   *fixture
}

func openUI(t *testing.T, f *fixture) *page {
	return &page{t: t, ctx: browser.New(t, 2*time.Minute), f: f}
}

func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// until waits up to timeout for the JavaScript expression to be true.
func (p *page) until(what, expr string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			text, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
			p.t.Fatalf("%s: %s not true after %s (err %v); the page:\n%s", what, expr, timeout, err, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// eval returns the value of a JavaScript expression.
func (p *page) eval(expr string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// screenshot writes the page to $CAPSTAN_UI_SCREENSHOTS/name.png when
// that directory is set, for a person to look at.
func (p *page) screenshot(name string) {
	dir := os.Getenv("CAPSTAN_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
	}
}

// apps are the names of the applications listed, in order.
func (p *page) apps() string {
	return p.eval(`[...document.querySelectorAll('#apps .app')].map(e => e.dataset.app).join(',')`)
}

// login signs in through the login page.
func (p *page) login(user, password string) {
	p.t.Helper()
	p.until("the login page", `!!document.querySelector('#username')`, 10*time.Second)
	p.screenshot("login")
	p.do("signing in",
		chromedp.SendKeys(chromedp.CSS("#username"), user),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("#sign-in")))
}

func setStatus(t *testing.T, c client.Client, ns, name string, sync v1alpha1.SyncStatusCode, health v1alpha1.HealthStatusCode) {
	t.Helper()
	app := &v1alpha1.Application{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
		t.Fatal(err)
	}
	app.Status.Sync.Status, app.Status.Health.Status = sync, health
	if err := c.Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
}

// TestUIApplicationsList: in a real browser, a user is sent to the login
// page, signs in and lands where they were going; the demo apps are
// listed with their statuses; filters narrow the list, live in the URL
// and survive a reload; a change of status shows without a reload.
func TestUIApplicationsList(t *testing.T) {
	ctx := context.Background()
	f := start(t, true)
	for _, app := range []struct {
		name   string
		sync   v1alpha1.SyncStatusCode
		health v1alpha1.HealthStatusCode
	}{
		{"guestbook", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy},
		{"helm-guestbook", v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusProgressing},
		{"kustomize-guestbook", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy},
	} {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: app.name, Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/demo.git", Path: app.name},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: app.name}}}
		if err := f.c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		setStatus(t, f.c, f.ns, app.name, app.sync, app.health)
	}
	p := openUI(t, f)
	p.do("opening the UI", chromedp.Navigate(f.base+"/applications?health=Healthy"))
	p.until("a user without a session sent to log in", `location.pathname === '/login' && location.search.includes('return_url')`, 10*time.Second)
	p.login("admin", f.initialPassword())

	p.until("back where the user was going", `location.pathname === '/applications' && document.querySelectorAll('#apps .app').length === 2`, 10*time.Second)
	if got := p.apps(); got != "guestbook,kustomize-guestbook" {
		t.Errorf("healthy apps %q", got)
	}
	p.do("clearing the filters", chromedp.Click(chromedp.CSS("#clear-filters")))
	p.until("every app listed", `document.querySelectorAll('#apps .app').length === 3`, 10*time.Second)
	p.screenshot("applications")
	if got := p.eval(`document.querySelector('[data-app="helm-guestbook"]').innerText`); !strings.Contains(got, "OutOfSync") || !strings.Contains(got, "Progressing") {
		t.Errorf("helm-guestbook's tile: %q", got)
	}
	if got := p.eval(`document.querySelector('#filter-sync').innerText`); !strings.Contains(got, "Synced 2") || !strings.Contains(got, "OutOfSync 1") {
		t.Errorf("sync counts: %q", got)
	}

	// A filter by status, kept in the URL, survives a reload.
	p.do("choosing OutOfSync", chromedp.Click(chromedp.CSS(`#filter-sync input[value="OutOfSync"]`)))
	p.until("the OutOfSync app alone", `document.querySelectorAll('#apps .app').length === 1`, 10*time.Second)
	if got := p.eval(`location.search`); got != "?sync=OutOfSync" {
		t.Errorf("the URL's query is %q", got)
	}
	p.do("reloading", chromedp.Reload())
	p.until("the filter kept", `document.querySelectorAll('#apps .app').length === 1 && document.querySelector('#filter-sync input[value="OutOfSync"]').checked`, 10*time.Second)
	if got := p.apps(); got != "helm-guestbook" {
		t.Errorf("after a reload: %q", got)
	}

	// A search and the list view.
	p.do("searching", chromedp.Navigate(f.base+"/applications?search=kust&view=list"))
	p.until("the search applied", `document.querySelectorAll('#apps tr.app').length === 1`, 10*time.Second)
	p.screenshot("applications-list")

	// A change shows without a reload.
	p.do("listing all", chromedp.Navigate(f.base+"/applications"))
	p.until("every app listed", `document.querySelectorAll('#apps .app').length === 3`, 10*time.Second)
	p.eval(`window.notReloaded = 'yes'`)
	setStatus(t, f.c, f.ns, "guestbook", v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusHealthy)
	p.until("guestbook OutOfSync on screen", `document.querySelector('[data-app="guestbook"]').innerText.includes('OutOfSync')`, 2*time.Second+time.Second)
	if p.eval(`window.notReloaded || ''`) != "yes" {
		t.Error("the page was reloaded")
	}

	// An app's page lists its resources.
	p.do("opening guestbook", chromedp.Click(chromedp.CSS(`[data-app="guestbook"] a`)))
	p.until("guestbook's page", `location.pathname === '/applications/`+f.ns+`/guestbook' && !!document.querySelector('#app-status')`, 10*time.Second)
	p.screenshot("application")

	// The page and its assets are served compressed and cached.
	for _, path := range []string{"/assets/app.js", "/assets/style.css"} {
		req, _ := http.NewRequest("GET", f.base+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		tr := f.client.Transport
		if tr == nil {
			tr = http.DefaultTransport
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %v", path, resp.Header)
		}
	}
	if code := f.call("GET", "/api/v1/no-such-thing", "", "", nil); code != http.StatusNotFound {
		t.Errorf("an unknown API path answers %d, not the UI", code)
	}
}
