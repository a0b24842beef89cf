package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// extensionScript registers one extension of each kind Argo CD's
// extensionsAPI has, each drawing what its props carry.
const extensionScript = `
const api = window.extensionsAPI;
const el = (tag, text, id) => { const e = document.createElement(tag); e.textContent = text; if (id) e.id = id; return e; };
api.registerResourceExtension((p) => el('p', 'replicas ' + p.resource.spec.replicas + ' of ' + p.application.metadata.name +
  ', tree of ' + p.tree.nodes.length, 'ext-resource'), 'apps', 'Deployment', 'Rollout info');
api.registerResourceExtension(() => { throw new Error('boom'); }, '*', 'Serv*', 'Broken');
api.registerSystemLevelExtension(() => el('p', 'a page of its own', 'ext-system'), 'Costs', '/costs', 'fa-dollar');
api.registerStatusPanelExtension((p) => { const b = el('button', 'Cost details', 'ext-open'); b.type = 'button'; b.onclick = p.openFlyout; return b; },
  'Cost', 'cost', (p) => el('p', 'the costs of ' + p.application.metadata.name, 'ext-flyout'));
api.registerTopBarActionMenuExt(null, 'Diagnose', 'diagnose', (p) => el('p', 'diagnosing ' + p.application.metadata.name, 'ext-diagnose'),
  (app) => app.metadata.name === 'guestbook');
api.registerTopBarActionMenuExt(null, 'Hidden', 'hidden', () => el('p', 'x'), () => false);
api.registerAppViewExtension((p) => el('p', 'a view of ' + p.tree.nodes.length + ' nodes', 'ext-view'), 'Costs view', 'fa-chart');
`

// TestUIExtensions: the extension files of the extensions directory
// (and only those) are loaded, and each kind of Argo CD's UI extensions
// is drawn where Argo CD draws it, with its props: a resource tab, a
// page of its own, a status panel with its flyout, an action, an app view.
// A failing extension shows its error in its own box.
func TestUIExtensions(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"costs/extension-costs.js": extensionScript,
		"costs/helper.js":          "window.notAnExtension = true;",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := startWith(t, Options{Insecure: true, ExtensionsDir: dir})
	dest := kubeCluster.NewNamespace(t)
	leaveWorkload(t, f.c, dest)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://127.0.0.1:1/demo.git", Path: "guestbook"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app.Status.Resources = []v1alpha1.ResourceStatus{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: dest, Name: "guestbook-ui",
		Status: v1alpha1.SyncStatusCodeSynced}, {Version: "v1", Kind: "Service", Namespace: dest, Name: "guestbook-ui", Status: v1alpha1.SyncStatusCodeOutOfSync}}
	if err := f.c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	p := openUI(t, f)
	p.Do("opening the app", chromedp.Navigate(f.base+"/applications/"+f.ns+"/guestbook"))
	p.Login("admin", f.initialPassword())
	p.Until("the app page with its extensions", `!!document.querySelector('#tree li[data-kind="Pod"]') && !!document.querySelector('#ext-open')`, 10*time.Second)
	if got := p.Eval(`[!!document.querySelector('#ext-action-diagnose'), !!document.querySelector('#ext-action-hidden'), String(window.notAnExtension)].join()`); got != "true,false,undefined" {
		t.Errorf("the action shown, the hidden one not, other files not loaded: %s", got)
	}

	p.Do("the status panel's flyout", chromedp.Click(chromedp.CSS("#ext-open")))
	p.Until("shown", `!!document.querySelector('dialog[open] #ext-flyout') && document.querySelector('#ext-flyout').innerText === 'the costs of guestbook'`, 5*time.Second)
	p.Do("closed", chromedp.Click(chromedp.CSS("#flyout-close")))
	p.Do("the action", chromedp.Click(chromedp.CSS("#ext-action-diagnose")))
	p.Until("its flyout", `!!document.querySelector('dialog[open] #ext-diagnose') && document.querySelector('#ext-diagnose').innerText === 'diagnosing guestbook'`, 5*time.Second)
	p.Do("closed", chromedp.Click(chromedp.CSS("#flyout-close")))

	p.Do("the extension's view", chromedp.Click(chromedp.CSS("#view-ext-0")))
	p.Until("drawn with the tree", `location.search.includes('view=ext-0') && /^a view of [1-9][0-9]* nodes$/.test(document.querySelector('#ext-view').innerText)`, 5*time.Second)

	p.Do("the Deployment's panel", chromedp.Click(chromedp.CSS("#view-list")), chromedp.WaitVisible(chromedp.CSS(`#resources tr[data-kind="Deployment"] button`)),
		chromedp.Click(chromedp.CSS(`#resources tr[data-kind="Deployment"] button`)), chromedp.WaitVisible(chromedp.CSS("#tab-ext-0")))
	if got := p.Eval(`document.querySelector('#tab-ext-0').innerText + ',' + !!document.querySelector('#tab-ext-1')`); got != "Rollout info,false" {
		t.Errorf("the Deployment's extension tabs: %s", got)
	}
	p.Do("its tab", chromedp.Click(chromedp.CSS("#tab-ext-0")))
	p.Until("drawn with the live object", `!!document.querySelector('#ext-resource') && /^replicas 1 of guestbook, tree of [1-9]/.test(document.querySelector('#ext-resource').innerText)`, 5*time.Second)
	p.Do("the Service's panel", chromedp.Click(chromedp.CSS(`#resources tr[data-kind="Service"] button`)), chromedp.WaitVisible(chromedp.CSS("#tab-ext-0")),
		chromedp.Click(chromedp.CSS("#tab-ext-0")))
	p.Until("its failure in its own box", `!!document.querySelector('#resource-extension') && document.querySelector('#resource-extension').innerText === 'The extension failed: boom'`, 5*time.Second)

	// The link is clicked on the element itself: a click at its place on
	// the screen was seen lost on a busy machine while the page drew again.
	if got := p.Eval(`(document.querySelector('a.nav-extension[data-extension="costs"]').click(), location.pathname)`); got != "/costs" {
		t.Fatalf("the page of its own: at %s after the click", got)
	}
	p.Until("drawn", `location.pathname === '/costs' && document.querySelector('main h1').innerText === 'Costs' && !!document.querySelector('#ext-system')`, 10*time.Second)
	p.Do("opened by its URL", chromedp.Navigate(f.base+"/costs"))
	p.Until("drawn again", `!!document.querySelector('#ext-system')`, 10*time.Second)
}
