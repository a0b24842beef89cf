package browser

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Page is a browser tab a test drives.
type Page struct {
	t   testing.TB
	ctx context.Context
}

// Open starts a browser (see New) and returns its tab.
func Open(t testing.TB, timeout time.Duration) *Page {
	return &Page{t: t, ctx: New(t, timeout)}
}

// Do runs steps, failing the test with what when one fails.
func (p *Page) Do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// Until waits up to timeout for the JavaScript expression to be true,
// across navigations; it fails the test with the page's text when it is
// not.
func (p *Page) Until(what, expr string, timeout time.Duration) {
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

// Eval returns the value of a JavaScript expression.
func (p *Page) Eval(expr string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// Screenshot writes the page to $CAPSTAN_UI_SCREENSHOTS when that
// directory is set, for a person to look at: name.png as drawn,
// name-dark.png with the system's dark theme, and name-narrow.png in a
// phone's width (390 pixels); the window is as before afterwards.
func (p *Page) Screenshot(name string) {
	dir := os.Getenv("CAPSTAN_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	media := func(features ...*emulation.MediaFeature) func() error {
		return func() error {
			_, err := chromedp.Call(p.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features})
			return err
		}
	}
	shots := []struct {
		suffix        string
		before, after func() error
	}{
		{"", nil, nil},
		{"-dark", media(&emulation.MediaFeature{Name: "prefers-color-scheme", Value: "dark"}), media()},
		{"-narrow", func() error { return chromedp.Do(p.ctx, chromedp.EmulateViewport(390, 844)) },
			func() error {
				_, err := chromedp.Call(p.ctx, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
				return err
			}},
	}
	for _, shot := range shots {
		var err error
		if shot.before != nil {
			err = shot.before()
			time.Sleep(200 * time.Millisecond) // the page relaid out
		}
		if err == nil {
			var png []byte
			if png, err = chromedp.Run(p.ctx, chromedp.CaptureScreenshot()); err == nil {
				err = os.WriteFile(filepath.Join(dir, name+shot.suffix+".png"), png, 0o644)
			}
		}
		if shot.after != nil {
			if after := shot.after(); err == nil {
				err = after
			}
		}
		if err != nil {
			p.t.Errorf("screenshot %s%s: %v", name, shot.suffix, err)
		}
	}
}

// Login signs in through Capstan's login page, which the tab shows.
func (p *Page) Login(user, password string) {
	p.t.Helper()
	p.Until("the login page", `!!document.querySelector('#username')`, 10*time.Second)
	p.Screenshot("login")
	p.Do("signing in",
		chromedp.SendKeys(chromedp.CSS("#username"), user),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("#sign-in")))
}

// Value returns the value of a JavaScript expression as a T.
func Value[T any](p *Page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// HeapUsed is the JavaScript heap the tab uses, in bytes.
func (p *Page) HeapUsed() float64 {
	p.t.Helper()
	usage, err := chromedp.Call(p.ctx, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		p.t.Fatalf("reading the heap's size: %v", err)
	}
	return usage.UsedSize
}

// ClearCache empties the browser's HTTP cache: the next page loads as on
// a first visit.
func (p *Page) ClearCache() {
	p.t.Helper()
	if _, err := chromedp.Call(p.ctx, network.ClearBrowserCache, cdp.Empty{}); err != nil {
		p.t.Fatalf("clearing the cache: %v", err)
	}
}
