package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/browser"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// BenchmarkUIBrowser measures the web UI in a real Chromium against a real
// API server holding 10,000 Applications, the server reading through its
// informer cache as `capstan server` does. Each iteration is a first
// visit (the browser's cache emptied) and reports list-ms, from navigation
// to the first page of apps drawn; list-KB, the bytes transferred for it
// (page, scripts, API answers); heap-MB, the tab's JavaScript heap;
// update-ms, from an Application's status changed in Kubernetes to the
// open list showing it; tree-ms, from navigation to the drawn graph of an
// Application of 1,000 resources (one in ten a Service with the Pod it
// selects); filter-ms, a kind filter applied to that graph; network-ms
// and pods-ms, its network and pods views drawn; tree5k-ms, the graph of
// an Application of 5,000 resources drawn, and filter5k-ms and pan5k-ms,
// a name filter typed and a pan of 800 pixels on it until the next frame.
//
//	go test ./internal/server -run '^$' -bench UIBrowser -benchtime 3x
func BenchmarkUIBrowser(b *testing.B) {
	localcluster.Need(b)
	const apps, resources = 10000, 1000
	f := startCached(b)
	dest := kubeCluster.NewNamespace(b)
	createApps(b, f.ns, apps)
	createBigApp(b, f, dest, "big", resources, true)
	createBigApp(b, f, kubeCluster.NewNamespace(b), "huge", 5*resources, false)

	p := &page{Page: browser.Open(b, 30*time.Minute), f: f}
	p.Do("opening the UI", chromedp.Navigate(f.base+"/applications"))
	p.Login("admin", f.initialPassword())
	p.Until("every app in the server's cache", fmt.Sprintf(`(document.querySelector('#total') || {}).innerText === '1–60 of %d applications'`, apps+2), 5*time.Minute)

	var list, kb, heap, update, tree, filter, network, pods, tree5k, filter5k, pan5k float64
	for b.Loop() {
		p.ClearCache()
		p.Do("opening the list", chromedp.Navigate(f.base+"/applications"))
		p.Until("the first page drawn", `performance.getEntriesByName('capstan:applications').length > 0`, time.Minute)
		list += browser.Value[float64](p.Page, `performance.getEntriesByName('capstan:applications')[0].startTime`)
		kb += browser.Value[float64](p.Page, `[...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
			.reduce((sum, e) => sum + e.transferSize, 0)`) / 1024
		heap = max(heap, p.HeapUsed()/(1<<20))
		update += statusChange(b, p, f)

		p.Eval(`(localStorage.removeItem('capstan.tree'), '')`)
		p.Do("opening the big app", chromedp.Navigate(f.base+"/applications/"+f.ns+"/big"))
		p.Until("its tree drawn", fmt.Sprintf(`performance.getEntriesByName('capstan:app').length > 0 && document.querySelectorAll('#tree .node').length > %d`, resources), time.Minute)
		tree += browser.Value[float64](p.Page, `performance.getEntriesByName('capstan:app')[0].startTime`)
		filter += timed(p, `(() => { const s = document.querySelector('#tree-kinds'); [...s.options].forEach((o) => { o.selected = o.value === 'Pod'; });
			s.dispatchEvent(new Event('change')); })()`)
		p.Eval(`(localStorage.removeItem('capstan.tree'), '')`)
		network += timed(p, `document.querySelector('#view-network').click()`)
		p.Until("Services and their Pods", `document.querySelectorAll('#network li[data-kind="Service"] li[data-kind="Pod"]').length >= 90`, time.Minute)
		pods += timed(p, `document.querySelector('#view-pods').click()`)
		p.Until("the Pods", `document.querySelectorAll('#pods .pod').length >= 90`, time.Minute)
		p.Eval(`(document.querySelector('#view-tree').click(), '')`)

		p.Do("opening the huge app", chromedp.Navigate(f.base+"/applications/"+f.ns+"/huge"))
		p.Until("its tree drawn", fmt.Sprintf(`performance.getEntriesByName('capstan:app').length > 0 && document.querySelectorAll('#tree .node').length > %d`, 5*resources), time.Minute)
		tree5k += browser.Value[float64](p.Page, `performance.getEntriesByName('capstan:app')[0].startTime`)
		filter5k += timed(p, `(() => { const s = document.querySelector('#tree-name'); s.value = 'config-04'; s.dispatchEvent(new Event('input')); })()`)
		pan5k += framed(p, `(() => { const pane = document.querySelector('.graph-pane'); pane.scrollTop += 800; pane.scrollLeft += 100; })()`)
	}
	n := float64(b.N)
	b.ReportMetric(list/n, "list-ms")
	b.ReportMetric(kb/n, "list-KB")
	b.ReportMetric(heap, "heap-MB")
	b.ReportMetric(update/n, "update-ms")
	b.ReportMetric(tree/n, "tree-ms")
	b.ReportMetric(filter/n, "filter-ms")
	b.ReportMetric(network/n, "network-ms")
	b.ReportMetric(pods/n, "pods-ms")
	b.ReportMetric(tree5k/n, "tree5k-ms")
	b.ReportMetric(filter5k/n, "filter5k-ms")
	b.ReportMetric(pan5k/n, "pan5k-ms")
}

// timed runs a statement in the page and returns the milliseconds until
// the page is laid out after it.
func timed(p *page, statement string) float64 {
	return browser.Value[float64](p.Page, `(() => { const t = performance.now(); `+statement+`; document.body.offsetHeight; return performance.now() - t; })()`)
}

// framed runs a statement in the page and returns the milliseconds until
// the frame after it is drawn.
func framed(p *page, statement string) float64 {
	p.Eval(`(() => { window.framedMs = -1; const t = performance.now(); ` + statement + `;
		requestAnimationFrame(() => requestAnimationFrame(() => { window.framedMs = performance.now() - t; })); return ''; })()`)
	p.Until("the next frame", `window.framedMs >= 0`, time.Minute)
	return browser.Value[float64](p.Page, `window.framedMs`)
}

// statusChange flips app-00000's sync status in Kubernetes and returns the
// milliseconds until the open list, which shows it first, draws the change.
func statusChange(b *testing.B, p *page, f *fixture) float64 {
	b.Helper()
	ctx := context.Background()
	app := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "app-00000"}, app); err != nil {
		b.Fatal(err)
	}
	next := v1alpha1.SyncStatusCodeOutOfSync
	if app.Status.Sync.Status == next {
		next = v1alpha1.SyncStatusCodeSynced
	}
	// The page notes the time it first draws the new status.
	p.Eval(fmt.Sprintf(`(() => {
		window.shownAt = 0;
		const seen = () => (document.querySelector('[data-app="app-00000"] [data-sync]') || {dataset: {}}).dataset.sync === %q;
		new MutationObserver((_, o) => { if (seen()) { window.shownAt = Date.now(); o.disconnect(); } })
			.observe(document.getElementById('app'), {childList: true, subtree: true});
		return '';
	})()`, next))
	app.Status.Sync.Status = next
	changed := time.Now()
	if err := f.c.Update(ctx, app); err != nil {
		b.Fatal(err)
	}
	p.Until("the change shown", `window.shownAt > 0`, time.Minute)
	return browser.Value[float64](p.Page, `window.shownAt`) - float64(changed.UnixMilli())
}

// bulkClient writes many objects quickly: the tests' client is rate
// limited.
func bulkClient(b *testing.B) client.Client {
	cfg := rest.CopyConfig(kubeCluster.Config)
	cfg.QPS, cfg.Burst = 5000, 5000
	c, err := kube.NewClient(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// createApps creates n Applications in ns, one in ten OutOfSync, spread
// over 20 projects and 50 destination namespaces.
func createApps(b *testing.B, ns string, n int) {
	b.Helper()
	c := bulkClient(b)
	parallel(b, n, func(i int) error {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d", i), Namespace: ns,
			Labels: map[string]string{"team": fmt.Sprintf("team-%d", i%20)}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: fmt.Sprintf("apps/%05d", i)},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: fmt.Sprintf("ns-%d", i%50)}},
			Status: v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced},
				Health: v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusHealthy}}}
		if i%10 == 0 {
			app.Status.Sync.Status = v1alpha1.SyncStatusCodeOutOfSync
		}
		return c.Create(context.Background(), app)
	})
}

// createBigApp creates the Application name of n resources in dest, each
// live and listed in its status: ConfigMaps, and with network one in ten a
// Service with a Pod it selects.
func createBigApp(b *testing.B, f *fixture, dest, name string, n int, network bool) {
	b.Helper()
	c := bulkClient(b)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: name},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}}}
	app.Status.Sync.Status, app.Status.Health.Status = v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy
	objects := make([]client.Object, 0, n)
	for i := 0; len(objects) < n; i++ {
		meta := metav1.ObjectMeta{Name: fmt.Sprintf("config-%04d", i), Namespace: dest}
		if network && i%10 == 0 {
			selector := map[string]string{"app": fmt.Sprintf("web-%04d", i)}
			objects = append(objects, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%04d", i), Namespace: dest},
				Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Port: 80}}}},
				&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%04d", i), Namespace: dest, Labels: selector},
					Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}})
			continue
		}
		objects = append(objects, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"index": fmt.Sprint(i)}})
	}
	for _, o := range objects {
		kind := "ConfigMap"
		switch o.(type) {
		case *corev1.Service:
			kind = "Service"
		case *corev1.Pod:
			kind = "Pod"
		}
		app.Status.Resources = append(app.Status.Resources, v1alpha1.ResourceStatus{Version: "v1", Kind: kind, Namespace: dest,
			Name: o.GetName(), Status: v1alpha1.SyncStatusCodeSynced})
	}
	if err := c.Create(context.Background(), app); err != nil {
		b.Fatal(err)
	}
	if network {
		ensureServiceAccount(b, c, dest)
	}
	parallel(b, len(objects), func(i int) error { return c.Create(context.Background(), objects[i]) })
}

// ensureServiceAccount creates the namespace's default ServiceAccount,
// without which no Pod is admitted (the tests' cluster runs no controller
// making it).
func ensureServiceAccount(b *testing.B, c client.Client, ns string) {
	b.Helper()
	err := c.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
}

// parallel runs create(0…n-1) on 16 goroutines, failing on the first
// error.
func parallel(b *testing.B, n int, create func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				if err := create(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
