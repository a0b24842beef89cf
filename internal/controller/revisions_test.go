package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// configMapApps creates n automated Applications, app-<i>, each one
// ConfigMap from apps/<i> of repoURL.
func configMapApps(t *testing.T, e *env, repoURL, dest string, n int) {
	t.Helper()
	for i := range n {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i), Namespace: e.ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: fmt.Sprintf("apps/%d", i), TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
			},
		}
		if err := e.client.Create(context.Background(), app); err != nil {
			t.Fatal(err)
		}
	}
}

func configMapFiles(n int, value string) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("apps/%d/cm.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {value: %s}\n", i, value)
	}
	return files
}

// waitRevision waits until n apps are Synced at revision.
func (e *env) waitRevision(n int, revision string) {
	e.t.Helper()
	e.eventually("all apps Synced at "+revision, func() string {
		for i := range n {
			a := e.app(fmt.Sprintf("app-%d", i))
			if a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || a.Status.Sync.Revision != revision {
				return fmt.Sprintf("app-%d %s at %s", i, a.Status.Sync.Status, a.Status.Sync.Revision)
			}
		}
		return ""
	})
}

func TestRepositoryChangeIsDetectedOncePerRepository(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	const n = 3
	first := remote.Commit(t, "one", configMapFiles(n, "one"))
	// Neither the periodic refresh nor a lapsing ls-remote cache can find
	// the next commit during the test: only the webhook's signal can.
	svc := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Hour})
	changes := make(chan repo.Change, 1)
	e := startWith(t, testCluster.NewNamespace(t), func(o *Options) {
		o.Resync, o.RepoPoll, o.Renderer, o.RepoChanges = time.Hour, time.Hour, svc, changes
	})
	dest := testCluster.NewNamespace(t)
	configMapApps(t, e, remote.URL, dest, n)
	e.waitRevision(n, first)

	second := remote.Commit(t, "two", configMapFiles(n, "two"))
	before := svc.GitStore().Repo(remote.URL, git.Creds{}).Stats().LsRemotes
	time.Sleep(2 * time.Second) // room for a refresh that should not happen
	if a := e.app("app-0"); a.Status.Sync.Revision != first {
		t.Fatalf("revision moved to %s without a signal", a.Status.Sync.Revision)
	}
	changes <- repo.Change{URL: remote.URL + "/"} // as a webhook may name it: normalised before matching
	e.waitRevision(n, second)
	if got := svc.GitStore().Repo(remote.URL, git.Creds{}).Stats().LsRemotes - before; got != 1 {
		t.Errorf("%d ls-remotes for %d Applications on one repository, want 1", got, n)
	}
}

func TestRepositoryIsPolled(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "one", configMapFiles(2, "one"))
	e := startWith(t, testCluster.NewNamespace(t), func(o *Options) {
		o.Resync, o.RepoPoll = time.Hour, 500*time.Millisecond
		o.Renderer = repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Hour})
	})
	dest := testCluster.NewNamespace(t)
	configMapApps(t, e, remote.URL, dest, 2)
	e.waitRevision(2, first)
	second := remote.Commit(t, "two", configMapFiles(2, "two"))
	e.waitRevision(2, second)
}

// TestManifestGeneratePathsLimitTheWebhookRefresh: a webhook's push that
// lists its files refreshes only the Applications whose
// manifest-generate-paths it touches; a push without files refreshes all.
func TestManifestGeneratePathsLimitTheWebhookRefresh(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "one", configMapFiles(2, "one"))
	changes := make(chan repo.Change, 1)
	e := startWith(t, testCluster.NewNamespace(t), func(o *Options) {
		o.Resync, o.RepoPoll, o.RepoChanges = time.Hour, time.Hour, changes
		o.Renderer = repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Hour})
	})
	dest := testCluster.NewNamespace(t)
	configMapApps(t, e, remote.URL, dest, 2)
	for i := range 2 {
		e.update(fmt.Sprintf("app-%d", i), func(a *v1alpha1.Application) {
			a.Annotations = map[string]string{v1alpha1.AnnotationManifestGeneratePaths: ".;/shared"}
		})
	}
	e.waitRevision(2, first)
	// A later reconcile of app-1 for another reason would resolve the
	// branch afresh; let the ones that follow the first sync pass.
	e.settle("app-0", "app-1")

	files := map[string]string{"apps/0/cm.yaml": configMapFiles(1, "two")["apps/0/cm.yaml"]}
	second := remote.Commit(t, "two", files)
	changes <- repo.Change{URL: remote.URL, Files: []string{"apps/0/cm.yaml"}}
	e.eventually("app-0 at the second commit", func() string {
		if a := e.app("app-0"); a.Status.Sync.Revision != second {
			return "at " + a.Status.Sync.Revision
		}
		return ""
	})
	time.Sleep(2 * time.Second) // room for a refresh of app-1 that should not happen
	if a := e.app("app-1"); a.Status.Sync.Revision != first {
		t.Fatalf("app-1, whose paths the push did not touch, moved to %s", a.Status.Sync.Revision)
	}

	third := remote.Commit(t, "three", map[string]string{"shared/notes.txt": "x"})
	changes <- repo.Change{URL: remote.URL, Files: []string{"shared/notes.txt"}} // /shared is both apps'
	e.waitRevision(2, third)
}

// resolvedAt is a Renderer whose every revision resolves to one commit.
type resolvedAt string

func (r resolvedAt) Render(context.Context, *repo.Request) (*repo.Response, error) {
	return nil, fmt.Errorf("not rendered here")
}

func (r resolvedAt) Resolve(context.Context, *repo.ResolveRequest) (*repo.ResolveResponse, error) {
	return &repo.ResolveResponse{Revision: string(r)}, nil
}

// TestTouchedApplicationsAreQueuedFirst: of the Applications following a
// pushed repository, those whose path the push's files touch are
// re-queued before the others.
func TestTouchedApplicationsAreQueuedFirst(t *testing.T) {
	var queued []string
	p := &revisionPoller{renderer: resolvedAt("new"), enqueue: func(_ context.Context, a *v1alpha1.Application) {
		queued = append(queued, a.Name)
	}}
	app := func(name, path string) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "https://example.com/r.git", Path: path}}}
	}
	g := &followed{}
	change := repo.Change{URL: "https://example.com/r.git", Files: []string{"apps/b/cm.yaml"}}
	for _, a := range []*v1alpha1.Application{app("a", "apps/a"), app("b", "./apps/b/"), app("c", "apps/c"), app("root", "")} {
		g.apps = append(g.apps, newFollower(a, 0, *a.Spec.Source, change))
	}
	p.check(context.Background(), g, &requeues{enqueue: p.enqueue})
	if got, want := fmt.Sprint(queued), "[b root a c]"; got != want {
		t.Errorf("queued %s, want %s", got, want)
	}
}

// TestWebhookRequeuesAreSpread: beyond webhook.refresh.jitter.threshold,
// the Applications one webhook re-queues wait a random part of the jitter.
func TestWebhookRequeuesAreSpread(t *testing.T) {
	var mu sync.Mutex
	var queued []string
	enqueue := func(_ context.Context, a *v1alpha1.Application) {
		mu.Lock()
		defer mu.Unlock()
		queued = append(queued, a.Name)
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(queued)
	}
	p := &revisionPoller{renderer: resolvedAt("new"), enqueue: enqueue}
	g := &followed{}
	for _, name := range []string{"a", "b", "c", "d"} {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "https://example.com/r.git"}}}
		g.apps = append(g.apps, newFollower(a, 0, *a.Spec.Source, repo.Change{}))
	}
	// A jitter of an hour: only the threshold's two are queued now.
	p.check(context.Background(), g, &requeues{enqueue: enqueue, jitter: settings.RefreshJitter{Max: time.Hour, Threshold: 2}})
	if got := count(); got != 2 {
		t.Fatalf("%d queued at once, want the threshold's 2", got)
	}
	mu.Lock()
	queued = nil
	mu.Unlock()
	p.check(context.Background(), g, &requeues{enqueue: enqueue, jitter: settings.RefreshJitter{Max: 20 * time.Millisecond, Threshold: 2}})
	deadline := time.Now().Add(10 * time.Second)
	for count() < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := count(); got != 4 {
		t.Errorf("%d queued after the jitter, want all 4", got)
	}
}
