package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"golang.org/x/crypto/bcrypt"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/browser"
	"github.com/capstan-cd/capstan/internal/testing/dexserver"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// page is a browser tab on a running Server.
type page struct {
	*browser.Page
	f *fixture
}

func openUI(t *testing.T, f *fixture) *page {
	return &page{Page: browser.Open(t, 2*time.Minute), f: f}
}

// apps are the names of the applications listed, in order.
func (p *page) apps() string {
	return p.Eval(`[...document.querySelectorAll('#apps .app')].map(e => e.dataset.app).join(',')`)
}

// staysDrawn checks that the page named route is not drawn again while
// nothing changes: the event stream does not replay what it shows.
func (p *page) staysDrawn(route string) {
	p.f.t.Helper()
	drawn := `performance.getEntriesByName('capstan:` + route + `').length`
	before := browser.Value[float64](p.Page, drawn)
	time.Sleep(2 * time.Second) // a quiet period: nothing may redraw the page in it
	if after := browser.Value[float64](p.Page, drawn); after != before {
		p.f.t.Errorf("the %s page was drawn %v times in 2 s with nothing changing", route, after-before)
	}
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
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := startCached(t)
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
	p.Do("opening the UI", chromedp.Navigate(f.base+"/applications?health=Healthy"))
	p.Until("a user without a session sent to log in", `location.pathname === '/login' && location.search.includes('return_url')`, 10*time.Second)
	p.Login("admin", f.initialPassword())

	p.Until("back where the user was going", `location.pathname === '/applications' && document.querySelectorAll('#apps .app').length === 2`, 10*time.Second)
	if got := p.apps(); got != "guestbook,kustomize-guestbook" {
		t.Errorf("healthy apps %q", got)
	}
	p.Do("clearing the filters", chromedp.Click(chromedp.CSS("#clear-filters")))
	p.Until("every app listed", `document.querySelectorAll('#apps .app').length === 3`, 10*time.Second)
	p.Eval(`(window.scrollTo(0, 0), "")`)
	p.Screenshot("applications")
	if got := p.Eval(`document.querySelector('[data-app="helm-guestbook"]').innerText`); !strings.Contains(got, "OutOfSync") || !strings.Contains(got, "Progressing") {
		t.Errorf("helm-guestbook's tile: %q", got)
	}
	if got := p.Eval(`document.querySelector('#filter-sync').innerText`); !strings.Contains(got, "Synced 2") || !strings.Contains(got, "OutOfSync 1") {
		t.Errorf("sync counts: %q", got)
	}

	// A filter by status, kept in the URL, survives a reload.
	p.Do("choosing OutOfSync", chromedp.Click(chromedp.CSS(`#filter-sync input[value="OutOfSync"]`)))
	p.Until("the OutOfSync app alone", `document.querySelectorAll('#apps .app').length === 1`, 10*time.Second)
	if got := p.Eval(`location.search`); got != "?sync=OutOfSync" {
		t.Errorf("the URL's query is %q", got)
	}
	p.Do("reloading", chromedp.Reload())
	p.Until("the filter kept", `document.querySelectorAll('#apps .app').length === 1 && document.querySelector('#filter-sync input[value="OutOfSync"]').checked`, 10*time.Second)
	if got := p.apps(); got != "helm-guestbook" {
		t.Errorf("after a reload: %q", got)
	}

	// A search and the list view.
	p.Do("searching", chromedp.Navigate(f.base+"/applications?search=kust&view=list"))
	p.Until("the search applied", `document.querySelectorAll('#apps tr.app').length === 1`, 10*time.Second)
	p.Screenshot("applications-list")

	// A favourite, the favourites filter, the auto-sync filter, the
	// summary view, and a refresh of the selected apps.
	p.Do("starring guestbook", chromedp.Navigate(f.base+"/applications"))
	p.Until("every app listed", `document.querySelectorAll('#apps .app').length === 3`, 10*time.Second)
	p.Do("the star", chromedp.Click(chromedp.CSS(`[data-app="guestbook"] .star`)))
	p.Until("starred", `document.querySelector('[data-app="guestbook"] .star').getAttribute('aria-pressed') === 'true'`, 10*time.Second)
	p.Do("favourites only", chromedp.Click(chromedp.CSS("#filter-favourites")))
	p.Until("guestbook alone", `location.search.includes('favourites=true') && document.querySelectorAll('#apps .app').length === 1 && !!document.querySelector('[data-app="guestbook"]')`, 10*time.Second)
	p.Do("auto-sync on", chromedp.Navigate(f.base+"/applications?autoSync=Enabled"))
	p.Until("none has it", `document.querySelector('#total').innerText === 'No applications'`, 10*time.Second)
	p.Do("the summary", chromedp.Navigate(f.base+"/applications?view=summary"))
	p.Until("the summary's counts", `(document.querySelector('#summary-total') || {}).innerText === '3' && document.querySelector('#apps-summary').innerText.includes('OutOfSync')`, 10*time.Second)
	p.Screenshot("applications-summary")
	p.Do("selecting two", chromedp.Navigate(f.base+"/applications?search=guestbook&view=list"))
	p.Until("listed", `document.querySelectorAll('#apps tr.app').length === 3`, 10*time.Second)
	p.Do("choosing", chromedp.Click(chromedp.CSS(`[data-app="guestbook"] .pick`)), chromedp.Click(chromedp.CSS(`[data-app="helm-guestbook"] .pick`)),
		chromedp.Click(chromedp.CSS("#bulk-refresh")))
	// (A refresh answers once the controller has refreshed the app; none
	// runs here, so the asks are seen on the apps.)
	for _, name := range []string{"guestbook", "helm-guestbook"} {
		eventually.String(t, name+" asked to refresh", func() string {
			a := &v1alpha1.Application{}
			if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, a); err != nil || a.Annotations["argocd.argoproj.io/refresh"] != "normal" {
				return fmt.Sprintf("%v %v", err, a.Annotations)
			}
			return ""
		})
	}
	a := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "kustomize-guestbook"}, a); err != nil || a.Annotations["argocd.argoproj.io/refresh"] != "" {
		t.Errorf("an app not chosen was refreshed: %v %v", err, a.Annotations)
	}
	p.Do("back to tiles", chromedp.Navigate(f.base+"/applications?search=kust&view=list"))
	p.Until("the search applied", `document.querySelectorAll('#apps tr.app').length === 1`, 10*time.Second)

	// A change shows without a reload.
	p.Do("listing all", chromedp.Navigate(f.base+"/applications"))
	p.Until("every app listed", `document.querySelectorAll('#apps .app').length === 3`, 10*time.Second)
	p.Eval(`window.notReloaded = 'yes'`)
	setStatus(t, f.c, f.ns, "guestbook", v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusHealthy)
	p.Until("guestbook OutOfSync on screen", `document.querySelector('[data-app="guestbook"]').innerText.includes('OutOfSync')`, 2*time.Second+time.Second)
	if p.Eval(`window.notReloaded || ''`) != "yes" {
		t.Error("the page was reloaded")
	}
	p.staysDrawn("applications")

	// Readable in a narrow window: nothing wider than the screen.
	p.Do("a phone-sized window", chromedp.EmulateViewport(390, 800))
	p.Until("laid out for it", `document.documentElement.scrollWidth <= window.innerWidth && document.querySelectorAll('#apps .app').length === 3`, 5*time.Second)
	p.Do("a wide window", chromedp.EmulateViewport(1280, 900))

	// An app's page lists its resources.
	p.Do("opening guestbook", chromedp.Click(chromedp.CSS(`[data-app="guestbook"] a`)))
	p.Until("guestbook's page", `location.pathname === '/applications/`+f.ns+`/guestbook' && !!document.querySelector('#app-status')`, 10*time.Second)
	p.Screenshot("application")
	p.staysDrawn("app")

	// The page's assets are served compressed and cached, under the
	// directory the page names.
	dir := p.Eval(`new URL(document.querySelector('script[type="module"]').src).pathname.replace(/main\.js$/, '')`)
	if !regexp.MustCompile(`^/assets/[0-9a-f]{16}/$`).MatchString(dir) {
		t.Errorf("the page's modules are under %q", dir)
	}
	for _, path := range []string{dir + "main.js", dir + "core.js", dir + "style.css"} {
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

// TestUIApplicationPage: an app's page draws its resource tree
// (Deployment → ReplicaSet → Pod); the sync dialog asks for a sync with
// the options chosen; a read-only user finds Sync and Delete disabled and
// is refused when calling the API directly; delete with a cascade choice
// removes the app.
func TestUIApplicationPage(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.viewer": "login", "server.maxPodLogsToRender": "0"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: rbac.ConfigMapName, Namespace: f.ns},
		Data: map[string]string{"policy.default": "role:readonly"}}); err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("viewer-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := settings.SetPassword(ctx, f.c, f.ns, "viewer", hash); err != nil {
		t.Fatal(err)
	}
	dest := kubeCluster.NewNamespace(t)
	leaveWorkload(t, f.c, dest)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/demo.git", Path: "guestbook", TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app.Status.Sync.Status, app.Status.Health.Status = v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusHealthy
	app.Status.Resources = []v1alpha1.ResourceStatus{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: dest, Name: "guestbook-ui",
		Status: v1alpha1.SyncStatusCodeOutOfSync, Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}},
		{Version: "v1", Kind: "Service", Namespace: dest, Name: "guestbook-ui", Status: v1alpha1.SyncStatusCodeOutOfSync}}
	if err := f.c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	appURL := f.base + "/applications/" + f.ns + "/guestbook"

	// The viewer: Sync and Delete disabled, and the API refuses them.
	viewer := openUI(t, f)
	viewer.Do("opening the app", chromedp.Navigate(appURL))
	viewer.Login("viewer", "viewer-password")
	viewer.Until("the app's page", `!!document.querySelector('#sync')`, 10*time.Second)
	if got := viewer.Eval(`[document.querySelector('#sync').disabled, document.querySelector('#delete').disabled, document.querySelector('#refresh').disabled].join()`); got != "true,true,false" {
		t.Errorf("the viewer's Sync, Delete and Refresh disabled: %s", got)
	}
	var login map[string]string
	f.call("POST", "/api/v1/session", `{"username":"viewer","password":"viewer-password"}`, "", &login)
	if code := f.call("POST", "/api/v1/applications/guestbook/sync", `{}`, login["token"], nil); code != http.StatusForbidden {
		t.Errorf("the viewer's sync: %d, want 403", code)
	}

	// The admin: the tree, then a sync through the dialog.
	p := openUI(t, f)
	p.Do("opening the app", chromedp.Navigate(appURL))
	p.Login("admin", f.initialPassword())
	p.Until("the tree, Deployment → ReplicaSet → Pod",
		`!!document.querySelector('#tree li[data-kind="Deployment"] li[data-kind="ReplicaSet"] li[data-kind="Pod"]')`, 10*time.Second)
	p.Screenshot("application-tree")
	if got := p.Eval(`document.querySelector('#sync').disabled ? 'disabled' : 'enabled'`); got != "enabled" {
		t.Fatalf("the admin's Sync is %s", got)
	}
	p.Do("syncing with prune", chromedp.Click(chromedp.CSS("#sync")), chromedp.WaitVisible(chromedp.CSS("dialog[open]")),
		chromedp.Click(chromedp.CSS("#opt-prune")), chromedp.Click(chromedp.CSS("#opt-applyOutOfSyncOnly")),
		chromedp.Click(chromedp.CSS("#opt-pruneLast")), chromedp.Click(chromedp.CSS("#opt-validateFalse")),
		chromedp.SetValue(chromedp.CSS("#opt-propagation"), "background"), chromedp.Click(chromedp.CSS("#opt-retry")),
		chromedp.Click(chromedp.CSS("#sync-resource-Service-guestbook-ui")))
	p.Screenshot("sync-dialog")
	p.Do("synchronizing", chromedp.Click(chromedp.CSS("#dialog-ok")))
	eventually.NoError(t, "a sync asked for", func() error {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		if app.Operation == nil || app.Operation.Sync == nil {
			return errors.New("no operation")
		}
		return nil
	})
	if op := app.Operation.Sync; !op.Prune || op.Revision != "main" ||
		!slices.Equal(op.SyncOptions, v1alpha1.SyncOptions{"Validate=false", "PruneLast=true", "ApplyOutOfSyncOnly=true", "PrunePropagationPolicy=background"}) ||
		len(op.Resources) != 1 || op.Resources[0].Kind != "Deployment" || op.Resources[0].Name != "guestbook-ui" {
		t.Errorf("the sync asked for: %+v", op)
	}
	if r := app.Operation.Retry; r.Limit != 2 || r.Backoff == nil || r.Backoff.Duration != "5s" || r.Backoff.MaxDuration != "3m" {
		t.Errorf("the retry asked for: %+v", r)
	}
	p.Until("the sync shown as asked for", `document.querySelector('#operation') && document.querySelector('#operation').innerText.includes('Sync requested')`, 3*time.Second)

	// The Deployment's logs, refused past server.maxPodLogsToRender (0
	// here): the API's reason is shown.
	p.Do("the Deployment's logs", chromedp.Click(chromedp.CSS(`#tree li[data-kind="Deployment"] button`)), chromedp.WaitVisible(chromedp.CSS("#tab-logs")),
		chromedp.Click(chromedp.CSS("#tab-logs")))
	p.Until("refused with Argo CD's message", `!!document.querySelector('#logs-error') && document.querySelector('#logs-error').innerText.startsWith('max pods to view logs are reached')`, 10*time.Second)

	// Delete, keeping the resources.
	app.Operation = nil
	if err := f.c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	p.Until("the page without the operation", `!document.querySelector('#operation') || !document.querySelector('#operation').innerText.includes('Sync requested')`, 5*time.Second)
	p.Do("deleting", chromedp.Click(chromedp.CSS("#delete")), chromedp.WaitVisible(chromedp.CSS("dialog[open]")),
		chromedp.Click(chromedp.CSS("#cascade-non-cascading")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("back on the list", `location.pathname === '/applications'`, 10*time.Second)
	eventually.True(t, "the app deleted", func() bool {
		return apierrors.IsNotFound(f.c.Get(ctx, client.ObjectKeyFromObject(app), &v1alpha1.Application{}))
	})
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, &appsv1.Deployment{}); err != nil {
		t.Errorf("a non-cascading delete took the Deployment: %v", err)
	}
}

// leaveWorkload creates a Deployment with its ReplicaSet and Pod in ns, as
// the Deployment controller would have (owner references, no controllers
// running here).
func leaveWorkload(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	// No controllers run here to make the namespace's ServiceAccount.
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "guestbook-ui"}
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "ui", Image: "guestbook:v1"}}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "guestbook-ui", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod}}}
	if err := c.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	owner := func(kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "guestbook-ui-5d9f", Namespace: ns, OwnerReferences: owner("Deployment", dep.Name, dep.UID)},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod}}}
	if err := c.Create(ctx, rs); err != nil {
		t.Fatal(err)
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "guestbook-ui-5d9f-x1", Namespace: ns, Labels: labels, OwnerReferences: owner("ReplicaSet", rs.Name, rs.UID)}, Spec: pod}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// TestUICreateAppAndRepositories: an app created by the form and one from
// YAML; a delete with the foreground cascade; a repository's connection
// tested (right and wrong password), added, listed and removed.
func TestUICreateAppAndRepositories(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	p := openUI(t, f)
	p.Do("opening the form", chromedp.Navigate(f.base+"/applications/new"))
	p.Login("admin", f.initialPassword())
	p.Until("the form", `!!document.querySelector('#new-app-form #name')`, 10*time.Second)
	p.Do("filling the form",
		chromedp.SendKeys(chromedp.CSS("#name"), "web"),
		chromedp.SendKeys(chromedp.CSS("#repo"), "https://git.example.com/demo.git"),
		chromedp.SendKeys(chromedp.CSS("#path"), "guestbook"),
		chromedp.SendKeys(chromedp.CSS("#namespace"), "web"),
		chromedp.Click(chromedp.CSS("#opt-createNamespace")))
	p.Screenshot("new-app")
	p.Do("creating", chromedp.Click(chromedp.CSS("#create")))
	p.Until("the new app's page", `location.pathname === '/applications/`+f.ns+`/web'`, 10*time.Second)
	web := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	if src := web.Spec.Source; src == nil || src.Path != "guestbook" || src.TargetRevision != "HEAD" || web.Spec.Destination.Namespace != "web" ||
		web.Spec.SyncPolicy == nil || !slices.Contains(web.Spec.SyncPolicy.SyncOptions, "CreateNamespace=true") {
		t.Errorf("the app created: %+v", web.Spec)
	}

	p.Do("the YAML form", chromedp.Navigate(f.base+"/applications/new?mode=yaml"))
	p.Until("the YAML editor", `!!document.querySelector('#yaml')`, 10*time.Second)
	p.Eval(`document.querySelector('#yaml').value = document.querySelector('#yaml').value.replace('name: guestbook', 'name: from-yaml'); ''`)
	p.Do("creating from YAML", chromedp.Click(chromedp.CSS("#create")))
	p.Until("the YAML app's page", `location.pathname === '/applications/`+f.ns+`/from-yaml'`, 10*time.Second)

	// Delete with the foreground cascade: the resources go first, so the
	// app keeps Argo CD's finalizer until they have (no controller here).
	p.Do("opening web", chromedp.Navigate(f.base+"/applications/"+f.ns+"/web"))
	p.Until("web's page", `!!document.querySelector('#delete')`, 10*time.Second)
	p.Do("deleting", chromedp.Click(chromedp.CSS("#delete")), chromedp.WaitVisible(chromedp.CSS("dialog[open]")),
		chromedp.Click(chromedp.CSS("#cascade-foreground")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("back on the list", `location.pathname === '/applications'`, 10*time.Second)
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, web); err != nil || web.DeletionTimestamp == nil ||
		!slices.Contains(web.Finalizers, v1alpha1.ResourcesFinalizerName) {
		t.Errorf("after a foreground delete: %v, deletion %v, finalizers %v", err, web.DeletionTimestamp, web.Finalizers)
	}

	// Repositories.
	git := gitserver.New(t)
	remote := git.NewRepo(t, "demo")
	remote.Commit(t, "demo", map[string]string{"README": "demo\n"})
	p.Do("the repositories", chromedp.Click(chromedp.CSS("#nav-settings")))
	p.Until("the repository form", `!!document.querySelector('#repo-form #repo-url')`, 10*time.Second)
	p.Do("a wrong password",
		chromedp.SendKeys(chromedp.CSS("#repo-url"), remote.URL),
		chromedp.SendKeys(chromedp.CSS("#repo-username"), git.Username),
		chromedp.SendKeys(chromedp.CSS("#repo-password"), "wrong"),
		chromedp.Click(chromedp.CSS("#repo-test")))
	p.Until("the failure shown", `document.querySelector('#repo-connection-result').innerText.startsWith('Connection failed')`, 20*time.Second)
	p.Do("the right password", chromedp.SetValue(chromedp.CSS("#repo-password"), git.Password), chromedp.Click(chromedp.CSS("#repo-test")))
	p.Until("the success shown", `document.querySelector('#repo-connection-result').innerText === 'Connection successful'`, 20*time.Second)
	p.Do("connecting", chromedp.Click(chromedp.CSS("#repo-submit")))
	p.Until("listed", `!!document.querySelector('#repositories tr.repo[data-repo="`+remote.URL+`"]')`, 20*time.Second)
	p.Screenshot("repositories")
	// Edited: the form filled from the stored repository, its URL fixed,
	// the credentials entered again; the project is changed.
	row := `#repositories tr.repo[data-repo="` + remote.URL + `"]`
	p.Do("editing it", chromedp.Click(chromedp.CSS(row+" .edit")))
	p.Until("the form filled", `document.querySelector('#repo-url').readOnly && document.querySelector('#repo-username').value === '`+git.Username+`' &&
		document.querySelector('#repo-password').value === '' && document.querySelector('#repo-submit').innerText === 'Save'`, 10*time.Second)
	p.Do("a project and the password",
		chromedp.SetValue(chromedp.CSS("#repo-project"), "default"),
		chromedp.SendKeys(chromedp.CSS("#repo-password"), git.Password),
		chromedp.Click(chromedp.CSS("#repo-submit")))
	p.Until("saved", `!!document.querySelector('`+row+`') && document.querySelector('`+row+`').innerText.includes('default') &&
		document.querySelector('#repo-submit').innerText === 'Connect'`, 20*time.Second)
	if repos, err := settings.RepositorySecrets(ctx, f.c, f.ns, v1alpha1.SecretTypeRepository); err != nil || len(repos) != 1 || repos[0].Project != "default" ||
		repos[0].Password != git.Password || repos[0].Username != git.Username {
		t.Errorf("the edited repository: %v (%d stored)", err, len(repos))
	}
	p.Do("removing", chromedp.Click(chromedp.CSS(row+" .remove")),
		chromedp.WaitVisible(chromedp.CSS("dialog[open]")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("gone", `!document.querySelector('#repositories tr.repo')`, 10*time.Second)

	// A credential template for the server's repositories.
	p.Do("a credential template",
		chromedp.SendKeys(chromedp.CSS("#creds-url"), git.URL),
		chromedp.SendKeys(chromedp.CSS("#creds-username"), git.Username),
		chromedp.SendKeys(chromedp.CSS("#creds-password"), git.Password),
		chromedp.Click(chromedp.CSS("#creds-submit")))
	p.Until("the template listed", `!!document.querySelector('#repocreds tr.repo[data-repo="`+git.URL+`"]')`, 10*time.Second)
	p.Do("editing it: a proxy", chromedp.Click(chromedp.CSS(`#repocreds tr.repo .edit`)), chromedp.WaitVisible(chromedp.CSS("#creds-cancel")),
		chromedp.SendKeys(chromedp.CSS("#creds-proxy"), "http://proxy.example.com:3128"),
		chromedp.SendKeys(chromedp.CSS("#creds-password"), git.Password),
		chromedp.Click(chromedp.CSS("#creds-submit")))
	p.Until("saved", `document.querySelector('#creds-submit').innerText === 'Add'`, 10*time.Second)
	if creds, err := settings.RepositorySecrets(ctx, f.c, f.ns, v1alpha1.SecretTypeRepoCredentials); err != nil || len(creds) != 1 || creds[0].Proxy != "http://proxy.example.com:3128" ||
		creds[0].Password != git.Password {
		t.Errorf("the edited template: %v (%d stored)", err, len(creds))
	}
	p.Do("removing it", chromedp.Click(chromedp.CSS(`#repocreds tr.repo .remove`)),
		chromedp.WaitVisible(chromedp.CSS("dialog[open]")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("the template gone", `!document.querySelector('#repocreds tr.repo')`, 10*time.Second)

	// Clusters, projects, accounts and a new API key.
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.ci": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cluster-other", Namespace: f.ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}},
		StringData: map[string]string{"name": "other", "server": "https://other.example.com", "config": `{"bearerToken":"t"}`}}
	if err := f.c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	p.Do("the clusters", chromedp.Click(chromedp.CSS("#nav-clusters")))
	p.Until("the clusters listed", `document.querySelector('#clusters') && document.querySelector('#clusters').innerText.includes('https://kubernetes.default.svc') &&
		document.querySelector('#clusters').innerText.includes('https://other.example.com')`, 10*time.Second)
	p.Do("removing the other cluster", chromedp.Click(chromedp.CSS(`#clusters button[aria-label="Remove cluster other"]`)),
		chromedp.WaitVisible(chromedp.CSS("dialog[open]")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("the other cluster gone", `!document.querySelector('#clusters').innerText.includes('https://other.example.com')`, 10*time.Second)
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(other), other); !apierrors.IsNotFound(err) {
		t.Errorf("the removed cluster's Secret: %v", err)
	}

	// A project role with a policy, its token, revoked, then the role deleted.
	p.Do("the projects", chromedp.Click(chromedp.CSS("#nav-projects")))
	p.Until("the default project listed", `!!document.querySelector('#projects a[data-project="default"]')`, 10*time.Second)
	p.Do("its roles", chromedp.Click(chromedp.CSS(`#projects a[data-project="default"]`)), chromedp.WaitVisible(chromedp.CSS("#project-tab-roles")),
		chromedp.Click(chromedp.CSS("#project-tab-roles")))
	p.Until("the default project's roles", `!!document.querySelector('.project[data-project="default"] .add-role')`, 10*time.Second)
	p.Do("a new role",
		chromedp.Click(chromedp.CSS(`.project[data-project="default"] .add-role`)), chromedp.WaitVisible(chromedp.CSS("dialog[open]")),
		chromedp.SendKeys(chromedp.CSS(`dialog input[name="name"]`), "ci"),
		chromedp.SendKeys(chromedp.CSS(`dialog textarea[name="policies"]`), "p, proj:default:ci, applications, get, default/*, allow"),
		chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("the role listed", `!!document.querySelector('#roles-default tr.role .new-token')`, 10*time.Second)
	project := &v1alpha1.AppProject{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "default"}, project); err != nil || len(project.Spec.Roles) != 1 ||
		!slices.Equal(project.Spec.Roles[0].Policies, []string{"p, proj:default:ci, applications, get, default/*, allow"}) {
		t.Fatalf("the project's roles: %v %+v", err, project.Spec.Roles)
	}
	p.Do("a token for it", chromedp.Click(chromedp.CSS(`#roles-default .new-token`)))
	p.Until("the token shown once", `document.querySelector('#new-token') && document.querySelector('#new-token').value.length > 20`, 10*time.Second)
	roleToken := p.Eval(`document.querySelector('#new-token').value`)
	p.Do("closing it", chromedp.Click(chromedp.CSS("#dialog-ok")))
	if code := f.call("GET", "/api/v1/applications", "", roleToken, nil); code != http.StatusOK {
		t.Errorf("the role's token lists applications: %d", code)
	}
	p.Until("the token listed", `!!document.querySelector('#roles-default .revoke')`, 10*time.Second)
	p.Do("revoking it", chromedp.Click(chromedp.CSS(`#roles-default .revoke`)))
	p.Until("the token gone", `!document.querySelector('#roles-default .revoke')`, 10*time.Second)
	if code := f.call("GET", "/api/v1/applications", "", roleToken, nil); code != http.StatusUnauthorized {
		t.Errorf("a revoked token answers %d", code)
	}
	p.Do("deleting the role", chromedp.Click(chromedp.CSS(`#roles-default .delete-role`)))
	p.Until("the role gone", `!document.querySelector('#roles-default tr.role')`, 10*time.Second)
	p.Do("the accounts", chromedp.Click(chromedp.CSS("#nav-accounts")))
	p.Until("the ci account listed", `!!document.querySelector('#accounts button[data-account="ci"]')`, 10*time.Second)
	p.Do("a new key for ci", chromedp.Click(chromedp.CSS(`#accounts button[data-account="ci"]`)))
	p.Until("the key shown once", `document.querySelector('#new-token') && document.querySelector('#new-token').value.length > 20`, 10*time.Second)
	key := p.Eval(`document.querySelector('#new-token').value`)
	var info struct{ Username string }
	if f.call("GET", "/api/v1/session/userinfo", "", key, &info); info.Username != "ci" {
		t.Errorf("the key shown signs in as %q", info.Username)
	}
}

// TestUIParameters: a Helm app's values and parameters, and a Kustomize
// app's images, edited on the app's page and saved into its source.
func TestUIParameters(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	apps := map[string]*v1alpha1.ApplicationSource{
		"chart": {RepoURL: "https://charts.example.com", Chart: "guestbook", TargetRevision: "1.0.0",
			Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "replicaCount", Value: "1"}}}},
		"kust": {RepoURL: "https://git.example.com/demo.git", Path: "kustomize-guestbook"},
	}
	types := map[string]v1alpha1.ApplicationSourceType{"chart": "Helm", "kust": "Kustomize"}
	for name, src := range apps {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source: src, Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name}}}
		if err := f.c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		a.Status.SourceType = types[name]
		if err := f.c.Update(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	p := openUI(t, f)
	p.Do("opening the chart app", chromedp.Navigate(f.base+"/applications/"+f.ns+"/chart?details=parameters"))
	p.Login("admin", f.initialPassword())
	p.Until("its parameters", `!!document.querySelector('#helmParameters')`, 10*time.Second)
	if got := p.Eval(`document.querySelector('#helmParameters').value`); got != "replicaCount=1" {
		t.Errorf("the parameters shown: %q", got)
	}
	p.Do("editing them",
		chromedp.SetValue(chromedp.CSS("#helmParameters"), "replicaCount=3\nimage.tag=v2"),
		chromedp.SendKeys(chromedp.CSS("#helmValues"), "service:\n  type: NodePort\n"),
		chromedp.Click(chromedp.CSS("#save-parameters")))
	chart := &v1alpha1.Application{}
	eventually.NoError(t, "the parameters saved", func() error {
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "chart"}, chart); err != nil {
			return err
		}
		if h := chart.Spec.Source.Helm; h == nil || len(h.Parameters) != 2 {
			return fmt.Errorf("helm source %+v", h)
		}
		return nil
	})
	if h := chart.Spec.Source.Helm; h.Parameters[0] != (v1alpha1.HelmParameter{Name: "replicaCount", Value: "3"}) || h.Parameters[1] != (v1alpha1.HelmParameter{Name: "image.tag", Value: "v2"}) ||
		!strings.Contains(h.Values, "type: NodePort") || chart.Spec.Source.Chart != "guestbook" {
		t.Errorf("the source saved: %+v", chart.Spec.Source)
	}

	p.Do("opening the Kustomize app", chromedp.Navigate(f.base+"/applications/"+f.ns+"/kust?details=parameters"))
	p.Until("its images", `!!document.querySelector('#kustomizeImages')`, 10*time.Second)
	p.Do("setting an image", chromedp.SendKeys(chromedp.CSS("#kustomizeImages"), "nginx=nginx:1.28"), chromedp.Click(chromedp.CSS("#save-parameters")))
	kust := &v1alpha1.Application{}
	eventually.NoError(t, "the images saved", func() error {
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "kust"}, kust); err != nil {
			return err
		}
		if k := kust.Spec.Source.Kustomize; k == nil || len(k.Images) != 1 || string(k.Images[0]) != "nginx=nginx:1.28" {
			return fmt.Errorf("kustomize source %+v", k)
		}
		return nil
	})

	// The summary, edited: labels, automated sync with prune, sync
	// options, the prune propagation policy and retries.
	p.Do("the summary", chromedp.Navigate(f.base+"/applications/"+f.ns+"/kust"))
	p.Until("its summary", `!!document.querySelector('#app-summary') && !document.querySelector('#edit-summary').disabled`, 10*time.Second)
	p.Do("editing it", chromedp.Click(chromedp.CSS("#edit-summary")), chromedp.WaitVisible(chromedp.CSS("#summary-form")),
		chromedp.SetValue(chromedp.CSS("#labels"), "team=web\ntier=front"),
		chromedp.Click(chromedp.CSS("#opt-automated")), chromedp.Click(chromedp.CSS("#opt-autoPrune")),
		chromedp.Click(chromedp.CSS(`[name="so-CreateNamespace=true"]`)), chromedp.Click(chromedp.CSS(`[name="so-Validate=false"]`)),
		chromedp.SetValue(chromedp.CSS("#propagation"), "background"),
		chromedp.Click(chromedp.CSS("#opt-retry")), chromedp.SetValue(chromedp.CSS("#retryLimit"), "3"), chromedp.SetValue(chromedp.CSS("#retryDuration"), "10s"),
		chromedp.Click(chromedp.CSS("#save-summary")))
	eventually.String(t, "the summary saved", func() string {
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "kust"}, kust); err != nil {
			return err.Error()
		}
		pol := kust.Spec.SyncPolicy
		if kust.Labels["team"] != "web" || kust.Labels["tier"] != "front" || pol == nil || pol.Automated == nil || !pol.Automated.Prune ||
			pol.Retry == nil || pol.Retry.Limit != 3 || pol.Retry.Backoff == nil || pol.Retry.Backoff.Duration != "10s" ||
			!slices.Equal(pol.SyncOptions, v1alpha1.SyncOptions{"Validate=false", "CreateNamespace=true", "PrunePropagationPolicy=background"}) {
			return fmt.Sprintf("labels %v, policy %+v", kust.Labels, pol)
		}
		if k := kust.Spec.Source.Kustomize; k == nil || len(k.Images) != 1 {
			return fmt.Sprintf("the images were lost: %+v", kust.Spec.Source)
		}
		return ""
	})
	p.Until("the summary shown again", `document.querySelector('#app-summary') && document.querySelector('#app-summary').innerText.includes('PrunePropagationPolicy=background')`, 10*time.Second)

	// The manifest, edited as YAML.
	p.Do("the manifest", chromedp.Click(chromedp.CSS("#details-manifest")))
	p.Until("the manifest as YAML", `(document.querySelector('#app-manifest') || {}).value.includes('path: kustomize-guestbook\n')`, 10*time.Second)
	p.Eval(`(() => { const t = document.querySelector('#app-manifest'); t.value = t.value.replace('path: kustomize-guestbook\n', 'path: kustomize-guestbook-v2\n');
		t.dispatchEvent(new Event('input', { bubbles: true })); return ''; })()`)
	p.Do("saving it", chromedp.Click(chromedp.CSS("#save-manifest")))
	eventually.String(t, "the manifest saved", func() string {
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "kust"}, kust); err != nil {
			return err.Error()
		}
		if kust.Spec.Source.Path != "kustomize-guestbook-v2" || kust.Labels["team"] != "web" || len(kust.Spec.SyncPolicy.SyncOptions) != 3 {
			return fmt.Sprintf("%+v %v", kust.Spec, kust.Labels)
		}
		return ""
	})
}

// TestUIBehindAProxyAndAnExpiredSession: under a base href, behind a
// proxy that strips it, the UI works; a session that ends while a user is
// on a page sends them to log in, and back to that page afterwards.
func TestUIBehindAProxyAndAnExpiredSession(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := startWith(t, Options{Insecure: true, BaseHref: "/cd"})
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/demo.git", Path: "guestbook"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "guestbook"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(f.base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(http.StripPrefix("/cd", httputil.NewSingleHostReverseProxy(target)))
	t.Cleanup(proxy.Close)

	p := openUI(t, f)
	p.Do("opening the UI under /cd", chromedp.Navigate(proxy.URL+"/cd/applications"))
	p.Login("admin", f.initialPassword())
	p.Until("the list under /cd", `location.pathname === '/cd/applications' && document.querySelectorAll('#apps .app').length === 1`, 10*time.Second)
	p.Do("opening the app", chromedp.Click(chromedp.CSS(`[data-app="guestbook"] a`)))
	p.Until("the app's page under /cd", `location.pathname === '/cd/applications/`+f.ns+`/guestbook' && !!document.querySelector('#sync')`, 10*time.Second)

	// The session ends (signed out elsewhere); the next step asks to log in.
	p.Eval(`fetch('api/v1/session', {method: 'DELETE', credentials: 'same-origin'}).then(() => { window.signedOut = true }); 'ok'`)
	p.Until("signed out", `window.signedOut === true`, 10*time.Second)
	p.Do("going to the list", chromedp.Click(chromedp.CSS(`a.brand`)))
	p.Until("sent to log in", `location.pathname === '/cd/login' && new URLSearchParams(location.search).get('return_url') === 'applications'`, 10*time.Second)
	p.Login("admin", f.initialPassword())
	p.Until("back on the list", `location.pathname === '/cd/applications' && document.querySelectorAll('#apps .app').length === 1`, 10*time.Second)
}

// TestUISSOLogin: with oidc.config set, the login page offers the
// provider's button, and a user signs in through a real Dex and lands
// where they were going.
func TestUISSOLogin(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	f.withDex()
	p := openUI(t, f)
	p.Do("opening the UI", chromedp.Navigate(f.base+"/applications?view=list"))
	p.Until("the SSO button", `!!document.querySelector('a.sso') && document.querySelector('a.sso').innerText === 'Log in via Dex'`, 10*time.Second)
	p.Do("logging in through Dex", chromedp.Click(chromedp.CSS("a.sso")))
	p.Until("signed in, back on the list", `location.pathname === '/applications' && location.search === '?view=list' && !!document.querySelector('#logout') &&
		document.querySelector('.user').innerText.includes('`+dexserver.Email+`')`, 30*time.Second)
}

// TestUIImages: an app the image updater follows shows each image of its
// image-list annotation with the tag deployed, and the newest tag its
// strategy allows, the last update and the last error from the updater's
// Events on the app.
func TestUIImages(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns,
		Annotations: map[string]string{"argocd-image-updater.argoproj.io/image-list": "web=registry.example.com/team/web:1.x, cache=redis"}},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/demo.git", Path: "web"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app.Status.Summary.Images = []string{"registry.example.com/team/web:1.4.2", "redis:7.2"}
	if err := f.c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	// As the image updater records them.
	for i, e := range []struct{ typ, reason, msg string }{
		{corev1.EventTypeNormal, "NewestTagFound", `newest tag allowed for image registry.example.com/team/web is "1.4.2" (semver)`},
		{corev1.EventTypeNormal, "ImagesUpdated", `updated image registry.example.com/team/web from "1.4.1" to "1.4.2" (write-back argocd)`},
		{corev1.EventTypeNormal, "NewestTagFound", `newest tag allowed for image registry.example.com/team/web is "1.5.0" (semver)`},
		{corev1.EventTypeWarning, "ImageCheckFailed", "image redis: listing tags: unauthorized"},
	} {
		at := metav1.NewTime(time.Now().Add(time.Duration(i-10) * time.Second)) // in the order listed
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web.%d", i), Namespace: f.ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Application", APIVersion: "argoproj.io/v1alpha1", Name: app.Name, Namespace: f.ns, UID: app.UID},
			Type:           e.typ, Reason: e.reason, Message: e.msg, Source: corev1.EventSource{Component: "argocd-image-updater"},
			FirstTimestamp: at, LastTimestamp: at, Count: 1}
		if err := f.c.Create(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	p := openUI(t, f)
	p.Do("opening the app", chromedp.Navigate(f.base+"/applications/"+f.ns+"/web"))
	p.Login("admin", f.initialPassword())
	p.Until("its images", `document.querySelectorAll('#images tr.image').length === 2`, 10*time.Second)
	web := p.Eval(`document.querySelector('#images tr.image[data-image="registry.example.com/team/web"]').innerText`)
	if !strings.Contains(web, "1.4.2") || !strings.Contains(web, "1.x") || !strings.Contains(web, `from "1.4.1" to "1.4.2"`) {
		t.Errorf("the web image's row: %q", web)
	}
	if got := p.Eval(`document.querySelector('#images tr.image[data-image="registry.example.com/team/web"] .newest').innerText`); got != "1.5.0" {
		t.Errorf("the web image's newest allowed tag: %q, want the last one found", got)
	}
	cache := p.Eval(`document.querySelector('#images tr.image[data-image="redis"]').innerText`)
	if !strings.Contains(cache, "7.2") || !strings.Contains(cache, "unauthorized") {
		t.Errorf("the redis image's row: %q", cache)
	}
	p.Screenshot("images")
}

// TestUIUnderRootPath: with a root path the API and the UI are served
// under it, for a proxy that passes the path on.
func TestUIUnderRootPath(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startWith(t, Options{Insecure: true, RootPath: "/argocd"})
	if code := f.call("GET", "/argocd/api/version", "", "", nil); code != http.StatusOK {
		t.Errorf("the API under the root path: %d", code)
	}
	if code := f.call("GET", "/api/version", "", "", nil); code != http.StatusNotFound {
		t.Errorf("the API outside the root path: %d", code)
	}
	p := openUI(t, f)
	p.Do("opening the UI", chromedp.Navigate(f.base+"/argocd/applications"))
	p.Login("admin", f.initialPassword())
	p.Until("the list under /argocd", `location.pathname === '/argocd/applications' && document.querySelector('#total').innerText === 'No applications'`, 10*time.Second)
}

// unlabelled lists the page's form controls that have no label: neither a
// <label for>, an enclosing <label>, nor an aria-label.
const unlabelled = `[...document.querySelectorAll('input, select, textarea')].filter((el) =>
	!el.getAttribute('aria-label') && !el.closest('label') && !(el.id && document.querySelector('label[for="' + el.id + '"]'))
).map((el) => el.outerHTML).join('\n')`

// recordClickable, run in every document before the UI, keeps each
// element given a click handler, for notKeyboardReachable.
const recordClickable = `window.clickable = new Set();
const addListener = EventTarget.prototype.addEventListener;
EventTarget.prototype.addEventListener = function (type, listener, options) {
  if (type === 'click' && this instanceof Element) window.clickable.add(this);
  return addListener.call(this, type, listener, options);
};`

// notKeyboardReachable are the elements shown that act on a click but that
// Tab does not reach: what a keyboard-only user could not use.
const notKeyboardReachable = `[...window.clickable].filter((el) => el.isConnected && !el.closest('[hidden]') &&
	!el.matches('a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])')
).map((el) => el.outerHTML.slice(0, 160)).join('\n')`

// TestUIKeyboardAndLabels: a user signs in with the keyboard alone, every
// control of the main pages carries a label, and everything that acts on
// a click is reached with Tab.
func TestUIKeyboardAndLabels(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://127.0.0.1:1/demo.git", Path: "guestbook"}, // refused at once
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "guestbook"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	p := &page{Page: browser.Open(t, 6*time.Minute), f: f} // many pages, twice
	p.Do("watching click handlers", chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tgt, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: recordClickable})
		return err
	}))
	p.Do("opening the UI", chromedp.Navigate(f.base+"/applications"))
	p.Until("the login page, its first field focused", `document.activeElement && document.activeElement.id === 'username'`, 10*time.Second)
	if got := p.Eval(unlabelled); got != "" {
		t.Errorf("the login page's controls without a label:\n%s", got)
	}
	p.Do("typing", chromedp.KeyEvent("admin"), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(f.initialPassword()), chromedp.KeyEvent(kb.Enter))
	p.Until("signed in", `document.querySelectorAll('#apps .app').length === 1`, 10*time.Second)
	appPage := "/applications/" + f.ns + "/guestbook"
	// Each page is a new document: one whose streams stayed open would
	// hold the browser's six connections to the host and stall the next.
	pages := []string{"/applications", "/applications?view=list", "/applications?view=summary", appPage, appPage + "?view=network", appPage + "?view=pods",
		appPage + "?view=list", appPage + "?details=manifest", appPage + "?details=diff", appPage + "?details=events", "/applications/new", "/applicationsets",
		"/settings/repositories", "/settings/certificates", "/settings/gpgkeys", "/settings/clusters", "/settings/projects",
		"/settings/projects/default", "/settings/projects/default?tab=roles", "/settings/projects/default?tab=windows", "/settings/accounts",
		"/user-info", "/help"}
	for _, page := range pages {
		p.Do("opening "+page, chromedp.Navigate(f.base+page))
		p.Until(page+" drawn", `!!document.querySelector('main') && performance.getEntriesByType('mark').some((m) => m.name.startsWith('capstan:'))`, 10*time.Second)
		if got := p.Eval(unlabelled); got != "" {
			t.Errorf("%s: controls without a label:\n%s", page, got)
		}
		if got := p.Eval(`String(window.clickable ? window.clickable.size : 'no record')`); got == "no record" || got == "0" {
			t.Fatalf("%s: click handlers not recorded (%s)", page, got)
		}
		if got := p.Eval(notKeyboardReachable); got != "" {
			t.Errorf("%s: acts on a click but Tab does not reach it:\n%s", page, got)
		}
	}
	// The summary's editing form and the sync dialog.
	p.Do("editing the summary", chromedp.Navigate(f.base+appPage), chromedp.WaitVisible(chromedp.CSS("#edit-summary")), chromedp.Click(chromedp.CSS("#edit-summary")),
		chromedp.WaitVisible(chromedp.CSS("#summary-form")), chromedp.Click(chromedp.CSS("#sync")), chromedp.WaitVisible(chromedp.CSS("dialog[open]")))
	if got := p.Eval(unlabelled); got != "" {
		t.Errorf("the summary form and sync dialog: controls without a label:\n%s", got)
	}

	// The keyboard alone: Tab to a view and choose it, Tab to Sync and
	// open its dialog, Escape to close it.
	p.Do("the app page", chromedp.Navigate(f.base+appPage), chromedp.WaitVisible(chromedp.CSS("#view-network")))
	tabTo := func(selector string) {
		t.Helper()
		for range 120 {
			if p.Eval(`String(!!document.activeElement && document.activeElement.matches('`+selector+`'))`) == "true" {
				return
			}
			p.Do("Tab", chromedp.KeyEvent(kb.Tab))
		}
		t.Fatalf("%s is not reached with Tab", selector)
	}
	tabTo("#view-network")
	p.Do("choosing it", chromedp.KeyEvent(kb.Enter))
	p.Until("the network view", `location.search.includes('view=network') && !!document.querySelector('#network')`, 10*time.Second)
	p.Do("back to the top", chromedp.Navigate(f.base+appPage), chromedp.WaitVisible(chromedp.CSS("#sync")))
	tabTo("#sync")
	p.Do("opening the sync dialog", chromedp.KeyEvent(kb.Enter))
	p.Until("the dialog", `!!document.querySelector('dialog[open]')`, 10*time.Second)
	p.Do("closing it", chromedp.KeyEvent(kb.Escape))
	p.Until("closed", `!document.querySelector('dialog[open]')`, 10*time.Second)

	// In a phone's width nothing is wider than the screen; the graph
	// scrolls inside its own pane.
	p.Do("a phone-sized window", chromedp.EmulateViewport(390, 800))
	for _, page := range pages {
		p.Do("opening "+page, chromedp.Navigate(f.base+page))
		p.Until(page+" drawn", `!!document.querySelector('main') && performance.getEntriesByType('mark').some((m) => m.name.startsWith('capstan:'))`, 10*time.Second)
		if got := p.Eval(`document.documentElement.scrollWidth > window.innerWidth ? String(document.documentElement.scrollWidth) : ''`); got != "" {
			t.Errorf("%s is %s pixels wide at 390", page, got)
		}
	}
}

// TestUITerminate: a running sync shows its resources and Terminate, which
// asks the controller to stop it.
func TestUITerminate(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/demo.git", Path: "guestbook"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "guestbook"}},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "main"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app.Status.OperationState = &v1alpha1.OperationState{Operation: *app.Operation, Phase: "Running", Message: "one of 2 resources applied", StartedAt: metav1.Now(),
		SyncResult: &v1alpha1.SyncOperationResult{Revision: "main", Resources: []*v1alpha1.ResourceResult{
			{Version: "v1", Kind: "Service", Namespace: "guestbook", Name: "guestbook-ui", Status: "Synced", Message: "service/guestbook-ui created"}}}}
	if err := f.c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	p := openUI(t, f)
	p.Do("opening the app", chromedp.Navigate(f.base+"/applications/"+f.ns+"/guestbook"))
	p.Login("admin", f.initialPassword())
	p.Until("the running sync", `!!document.querySelector('#terminate') && document.querySelectorAll('#operation-resources tr.op-resource').length === 1`, 10*time.Second)
	p.Do("terminating", chromedp.Click(chromedp.CSS("#terminate")))
	p.Until("Terminating on screen", `document.querySelector('#operation').innerText.includes('Terminating')`, 10*time.Second)
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil || app.Status.OperationState.Phase != v1alpha1.OperationTerminating {
		t.Errorf("after Terminate: %v, phase %v", err, app.Status.OperationState.Phase)
	}
}
