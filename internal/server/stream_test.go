package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// applicationEvent is one message of the stream, in Argo CD's shape.
type applicationEvent struct {
	Type        watch.EventType       `json:"type"`
	Application *v1alpha1.Application `json:"application"`
}

// streamReader follows an application stream and remembers the latest
// "round" annotation it saw of each Application.
type streamReader struct {
	mu     sync.Mutex
	rounds map[string]string
}

func (f *fixture) readStream(t testing.TB, ctx context.Context, path, token string) *streamReader {
	t.Helper()
	resp := f.openStream(t, ctx, path, token)
	r := &streamReader{rounds: map[string]string{}}
	go eachResult(resp.Body, func(ev applicationEvent) {
		if ev.Application != nil {
			r.mu.Lock()
			r.rounds[ev.Application.Name] = ev.Application.Annotations["round"]
			r.mu.Unlock()
		}
	})
	return r
}

func (f *fixture) openStream(t testing.TB, ctx context.Context, path, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("stream %s: %d", path, resp.StatusCode)
	}
	return resp
}

// saw reports whether the reader's latest event of every app is round.
func (r *streamReader) saw(apps []string, round string) bool {
	want := map[string]string{}
	for _, a := range apps {
		want[a] = round
	}
	return r.sawEach(want)
}

// missing describes the changes the reader has not seen.
func (r *streamReader) missing(want map[string]string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for name, v := range want {
		if r.rounds[name] != v {
			out = append(out, fmt.Sprintf("%s: saw %q, want %q", name, r.rounds[name], v))
		}
	}
	sort.Strings(out)
	return fmt.Sprintf("%d of %d, first %v", len(out), len(want), out[:min(3, len(out))])
}

// sawEach reports whether the reader's latest event of each app shows the
// given annotation.
func (r *streamReader) sawEach(want map[string]string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, v := range want {
		if r.rounds[name] != v {
			return false
		}
	}
	return true
}

// TestStalledWatcherHoldsUpNoOther opens many application streams, one of
// which never reads, and changes large Applications many times: every
// reading stream sees every app's last change, and the streams of the
// server's namespace follow its informer cache, starting no watch of
// their own.
func TestStalledWatcherHoldsUpNoOther(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startCached(t)
	token := f.adminToken()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var apps []string
	for i := range 4 {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%d", i), Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "apps", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "apps"},
		}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		apps = append(apps, app.Name)
	}
	stalled := f.openStream(t, ctx, "/api/v1/stream/applications", token) // never read
	defer stalled.Body.Close()
	var readers []*streamReader
	for range 10 {
		readers = append(readers, f.readStream(t, ctx, "/api/v1/stream/applications", token))
	}
	// 40 changes of ~200 KB each: far more than the stalled connection's
	// buffers hold.
	payload := strings.Repeat("x", 200<<10)
	last := ""
	for round := range 40 {
		name := apps[round%len(apps)]
		last = fmt.Sprint(round / len(apps))
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"round":%q,"payload":%q}}}`, last, payload)
		if err := f.c.Patch(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}},
			client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range readers {
		eventually.True(t, fmt.Sprintf("reader %d seeing round %s of every app", i, last), func() bool { return r.saw(apps, last) })
	}
	if n := f.srv.feeds.following(); n != 0 {
		t.Errorf("%d informers of their own for streams of the server's namespace, want none", n)
	}
}

// TestStreamOfAnotherNamespace follows the Applications of a namespace
// the server's cache does not hold: the streams share one informer,
// started by the first and stopped after the last.
func TestStreamOfAnotherNamespace(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	other := kubeCluster.NewNamespace(t)
	f := serve(t, Options{Insecure: true, ApplicationNamespaces: []string{other}}, true)
	token := f.adminToken()
	ctx, cancel := context.WithCancel(context.Background())
	path := "/api/v1/stream/applications?appNamespace=" + other
	readers := []*streamReader{f.readStream(t, ctx, path, token), f.readStream(t, ctx, path, token)}
	if n := f.srv.feeds.following(); n != 1 {
		t.Fatalf("streams of one namespace follow %d informers, want 1", n)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: other, Annotations: map[string]string{"round": "1"}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "apps", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "apps"},
		}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	for i, r := range readers {
		eventually.True(t, fmt.Sprintf("stream %d of another namespace seeing its Application", i), func() bool { return r.saw([]string{"elsewhere"}, "1") })
	}
	cancel()
	eventually.True(t, "the informer stopping after its last stream", func() bool { return f.srv.feeds.following() == 0 })
}

// TestApplicationListFields lists Applications through the server with
// the web UI's kind of field selection.
func TestApplicationListFields(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startCached(t)
	token := f.adminToken()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "listed", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "apps", TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "apps"},
	}}
	if err := f.c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Metadata struct{ ResourceVersion string }
		Items    []map[string]any
	}
	f.pollCall(t, "GET", "/api/v1/applications?fields=items.metadata.name,items.spec.project", token, &list, func() bool { return len(list.Items) == 1 })
	got, _ := json.Marshal(list.Items[0])
	if string(got) != `{"metadata":{"name":"listed"},"spec":{"project":"default"}}` || list.Metadata.ResourceVersion == "" {
		t.Errorf("projected list: %s (resourceVersion %q)", got, list.Metadata.ResourceVersion)
	}
}
