package updater

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/webhook"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// fleet creates apps Applications sharing images images on the rig's
// registry (each with tags 1.0.0 and 1.1.0, and latest; alternately
// followed by semver and by newest build), written back through the
// Kubernetes API. They are not deployed: force-update stands in for the
// controller's summary.
func (r *rig) fleet(apps, images int) {
	r.t.Helper()
	r.dockerConfigSecret("fleet-pull", r.reg.Password)
	for i := range images {
		repo := fmt.Sprintf("fleet/img-%02d", i)
		r.reg.PushImage(r.t, repo, t0, "1.0.0")
		r.reg.PushImage(r.t, repo, t0.Add(time.Hour), "1.1.0", "latest")
	}
	for i := range apps {
		annotations := map[string]string{
			p + "image-list":   "img=" + r.image(fmt.Sprintf("fleet/img-%02d", i%images)),
			p + "force-update": "true",
			p + "ignore-tags":  "latest",
			p + "pull-secret":  "pullsecret:" + r.ns + "/fleet-pull",
		}
		if i%2 == 1 {
			annotations[p+"update-strategy"] = "newest-build"
		}
		r.create(&v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fleet-%04d", i), Namespace: r.ns, Annotations: annotations},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "fleet", Kustomize: &v1alpha1.ApplicationSourceKustomize{}},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "fleet"}},
		})
	}
}

// TestOneTagListPerImagePerCycle: Applications sharing an image cost one
// tag list per cycle between them, and tags seen before cost no metadata
// request.
func TestOneTagListPerImagePerCycle(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "", "", nil)
	r.fleet(40, 4)
	before := r.reg.Requests()
	if res := r.runOnce(); res.Applications != 40 || res.Images != 4 || res.Updated != 40 || res.Errors != 0 {
		t.Fatalf("first cycle %+v, want 40 Applications, 4 images, 40 updates", res)
	}
	// 4 tag lists, and the build dates of newest-build's tags (1.0.0 and
	// 1.1.0 of each image, once).
	if n := r.reg.Requests() - before; n > 4+4*2*3 {
		t.Errorf("first cycle sent %d registry requests", n)
	}
	before = r.reg.Requests()
	if res := r.runOnce(); res.Updated != 0 || res.Errors != 0 {
		t.Errorf("second cycle %+v, want nothing to update", res)
	}
	if n := r.reg.Requests() - before; n != 4 {
		t.Errorf("a cycle with nothing new sent %d registry requests, want 4 tag lists", n)
	}
	m := r.metrics
	if apps, images := testutil.ToFloat64(m.ApplicationsWatched), testutil.ToFloat64(m.ImagesWatched); apps != 40 || images != 4 {
		t.Errorf("metrics: %v applications, %v images watched", apps, images)
	}
	if n := testutil.CollectAndCount(m.ImagesUpdated); n != 40 {
		t.Errorf("metrics: images updated for %d applications, want 40", n)
	}
	if n := testutil.ToFloat64(m.RegistryRequests.WithLabelValues(r.reg.Host)); n < 8 {
		t.Errorf("metrics: %v registry requests, want at least the 8 tag lists", n)
	}
}

// webhookRig runs the updater's loop with an hour between polls and a
// webhook endpoint, for a plain-directory app written back to Git.
type webhookRig struct {
	*rig
	hook *httptest.Server
}

func newWebhookRig(tb testing.TB) *webhookRig {
	r := newBareRig(tb, "", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	r.reg.PushImage(tb, "hooked/app", t0, "1.0.0")
	r.repo.Commit(tb, "app", map[string]string{"hooked/deployment.yaml": deploymentYAML("hooked", r.image("hooked/app")+":1.0.0")})
	r.create(&v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "hooked", Namespace: r.ns, Annotations: map[string]string{
			p + "image-list":        r.image("hooked/app"),
			p + "pull-secret":       "pullsecret:" + r.ns + "/pull",
			p + "force-update":      "true",
			p + "write-back-method": "git",
		}},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "hooked", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "hooked"}},
	})
	pushes := make(chan []webhook.Push, 16)
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() { done <- r.u.Run(ctx, time.Hour, pushes) }()
	tb.Cleanup(func() { cancel(); <-done })
	hook := httptest.NewServer(&webhook.Handler{OnPush: func(p []webhook.Push) { pushes <- p }})
	tb.Cleanup(hook.Close)
	w := &webhookRig{rig: r, hook: hook}
	w.waitFor("1.0.0") // the first cycle ran
	return w
}

// release pushes tag and sends the registry's notification of it.
func (w *webhookRig) release(tag string) {
	w.reg.PushImage(w.t, "hooked/app", t0.Add(time.Hour), tag)
	body := fmt.Sprintf(`{"events":[{"action":"push","target":{"repository":"hooked/app","tag":%q},"request":{"host":%q}}]}`, tag, w.reg.Host)
	resp, err := http.Post(w.hook.URL+"/webhook", "application/vnd.docker.distribution.events.v1+json", strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		w.t.Fatalf("webhook: HTTP %d", resp.StatusCode)
	}
}

// waitFor waits until Git's manifest runs tag.
func (w *webhookRig) waitFor(tag string) {
	w.eventually(func() (bool, string) {
		w.repo.Pull(w.t)
		got := w.repo.File(w.t, "hooked/deployment.yaml")
		return strings.Contains(got, ":"+tag+" "), "the manifest in Git runs " + tag + ":\n" + got
	})
}

// TestRegistryWebhookCommitsAtOnce: a distribution notification makes
// the updater check the pushed image at once, an hour before its poll.
func TestRegistryWebhookCommitsAtOnce(t *testing.T) {
	localcluster.Need(t)
	w := newWebhookRig(t)
	w.release("1.1.0")
	w.waitFor("1.1.0")
}

// BenchmarkWebhookToCommit times a new tag's webhook to its commit.
func BenchmarkWebhookToCommit(b *testing.B) {
	localcluster.Need(b)
	w := newWebhookRig(b)
	b.ResetTimer()
	for i := range b.N {
		tag := fmt.Sprintf("2.%d.0", i)
		w.release(tag)
		w.waitFor(tag)
	}
}

// BenchmarkCycle1000Apps50Images times a cycle over 1,000 Applications
// sharing 50 images once they are current, and counts its registry
// requests (the target: the 50 tag lists, nothing else).
func BenchmarkCycle1000Apps50Images(b *testing.B) {
	localcluster.Need(b)
	r := newBareRig(b, "", "", nil)
	r.fleet(1000, 50)
	if res := r.runOnce(); res.Updated != 1000 {
		b.Fatalf("first cycle %+v, want 1000 updates", res)
	}
	before := r.reg.Requests()
	b.ResetTimer()
	for range b.N {
		if res := r.runOnce(); res.Updated != 0 || res.Errors != 0 || res.Images != 50 {
			b.Fatalf("cycle %+v", res)
		}
	}
	b.ReportMetric(float64(r.reg.Requests()-before)/float64(b.N), "registry-requests/cycle")
}
