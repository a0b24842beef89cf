package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// webhookRig wires the API server to a controller as capstan run does,
// with one automated Application following a local repository. The
// periodic refresh and the repository poll are an hour away, so only a
// webhook can bring a new commit in.
type webhookRig struct {
	tb     testing.TB
	c      client.WithWatch
	srv    *Server
	remote *gitserver.Repo
	app    *v1alpha1.Application
	events watch.Interface
	pushes int
}

func newWebhookRig(tb testing.TB) *webhookRig { return newWebhookRigWith(tb, 0) }

// newWebhookRigWith is newWebhookRig with followers more automated
// Applications following the same repository, each one ConfigMap of a
// directory of its own, with a manifest-generate-paths annotation naming
// it: a push that changes only the measured app's directory refreshes no
// follower, as Argo CD's webhook handles monorepos.
func newWebhookRigWith(tb testing.TB, followers int) *webhookRig {
	localcluster.Need(tb)
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		tb.Fatal(err)
	}
	c, err := kube.NewWatchClient(kubeCluster.Config)
	if err != nil {
		tb.Fatal(err)
	}
	ns, dest := kubeCluster.NewNamespace(tb), kubeCluster.NewNamespace(tb)
	rig := &webhookRig{tb: tb, c: c, remote: gitserver.NewLocalRepo(tb)}
	if followers > 0 {
		files := map[string]string{}
		for i := range followers {
			files[fmt.Sprintf("followers/f-%04d/cm.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f-%04d}\n", i)
		}
		rig.remote.Commit(tb, "followers", files)
	}
	first := rig.commit()

	renderer := repo.NewService(repo.Options{Root: tb.TempDir(), RefsTTL: time.Hour})
	changes := make(chan repo.Change, 8)
	runController(tb, ns, renderer, changes)
	rig.srv, err = New(ctx, Options{Client: c, Config: kubeCluster.Config, Renderer: renderer, Namespace: ns, Insecure: true,
		RepoChanged: func(c repo.Change) {
			select {
			case changes <- c:
			default: // a check is pending already
			}
		}})
	if err != nil {
		tb.Fatal(err)
	}
	if rig.events, err = c.Watch(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(ns)); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rig.events.Stop)
	// The name is unique: the tracking id names the app, not its control
	// namespace, and every test shares the cluster.
	rig.app = &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "hooked-" + dest, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			Source:     &v1alpha1.ApplicationSource{RepoURL: rig.remote.URL, Path: "app", TargetRevision: "main"},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}}
	if err := c.Create(ctx, rig.app); err != nil {
		tb.Fatal(err)
	}
	rig.waitSynced(first)
	rig.follow(ctx, ns, dest, followers)
	return rig
}

// follow creates n follower Applications and waits until all are Synced.
func (r *webhookRig) follow(ctx context.Context, ns, dest string, n int) {
	if n == 0 {
		return
	}
	for i := range n {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("f-%04d-%s", i, dest), Namespace: ns,
			Annotations: map[string]string{v1alpha1.AnnotationManifestGeneratePaths: "."}},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: r.app.Spec.Destination,
				Source:     &v1alpha1.ApplicationSource{RepoURL: r.remote.URL, Path: fmt.Sprintf("followers/f-%04d", i), TargetRevision: "main"},
				SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}}
		if err := r.c.Create(ctx, app); err != nil {
			r.tb.Fatal(err)
		}
	}
	// Polled each second: a list of every follower is not cheap.
	eventually.Within(r.tb, eventually.Options{Timeout: 5 * time.Minute, Interval: time.Second}, "every follower Synced", func() string {
		var list v1alpha1.ApplicationList
		if err := r.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		synced := 0
		for _, a := range list.Items {
			if a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.OperationState != nil && a.Status.OperationState.Phase.Completed() {
				synced++
			}
		}
		if synced < n+1 {
			return fmt.Sprintf("%d of %d followers Synced", synced-1, n)
		}
		return ""
	})
	// The rig's watch saw every follower's changes unread: a fresh one
	// starts from here.
	r.events.Stop()
	var err error
	if r.events, err = r.c.Watch(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(ns)); err != nil {
		r.tb.Fatal(err)
	}
	r.tb.Cleanup(r.events.Stop)
}

// commit pushes a new version of the app's ConfigMap and returns its SHA.
func (r *webhookRig) commit() string {
	r.pushes++
	return r.remote.Commit(r.tb, fmt.Sprint(r.pushes), map[string]string{
		"app/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: \"%d\"}\n", r.pushes)})
}

// webhook delivers GitHub's push event for the repository.
func (r *webhookRig) webhook() {
	payload := fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"html_url":%q,"default_branch":"main"},"commits":[{"modified":["app/cm.yaml"]}]}`, r.remote.URL)
	req := httptest.NewRequest("POST", "/api/webhook", strings.NewReader(payload))
	req.Header.Set("X-GitHub-Event", "push")
	rec := httptest.NewRecorder()
	r.srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		r.tb.Fatalf("webhook: %d %s", rec.Code, rec.Body)
	}
}

// waitSynced returns once the app is Synced at rev by a finished sync.
func (r *webhookRig) waitSynced(rev string) {
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev := <-r.events.ResultChan():
			a, ok := ev.Object.(*v1alpha1.Application)
			if !ok || a.Name != r.app.Name {
				continue
			}
			st := a.Status.OperationState
			if a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Sync.Revision == rev && st != nil && st.Phase.Completed() &&
				st.SyncResult != nil && st.SyncResult.Revision == rev {
				return
			}
		case <-timeout:
			got := &v1alpha1.Application{}
			_ = r.c.Get(context.Background(), client.ObjectKeyFromObject(r.app), got)
			r.tb.Fatalf("not Synced at %s after 60 s: %s at %s, operation %+v", rev, got.Status.Sync.Status, got.Status.Sync.Revision, got.Status.OperationState)
		}
	}
}

// TestWebhookSyncsThroughTheController: a push webhook alone brings the
// new commit in.
func TestWebhookSyncsThroughTheController(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	rig := newWebhookRig(t)
	rev := rig.commit()
	rig.webhook()
	rig.waitSynced(rev)
}
