package notifications_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/notifications"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/mailserver"
	"github.com/capstan-cd/capstan/internal/testing/mitmproxy"
)

var testCluster *localcluster.Cluster

// conditionHash is Argo CD's name for the condition of the test's trigger:
// the SHA-1 of its expression in unpadded URL-safe base64.
const conditionHash = "IwKhHw9Hu8IE3z5Y8CQE4vReLYs"

// hosted answers for the services whose clients have their address
// built in: started before anything else, it becomes the process's
// HTTPS proxy and certificate authority.
var hosted *mitmproxy.Proxy

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "capstan-notifications-")
	if err != nil {
		panic(err)
	}
	if hosted, err = mitmproxy.Start(dir); err != nil {
		panic(err)
	}
	code := localcluster.RunTests(m, localcluster.Options{}, &testCluster)
	os.RemoveAll(dir)
	os.Exit(code)
}

// hooks is a real HTTP server recording the bodies POSTed to it.
type hooks struct {
	mu     sync.Mutex
	bodies []string
}

func (h *hooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, r.Method+" "+r.URL.Path+" "+string(body))
	h.mu.Unlock()
}

func (h *hooks) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

// testLog writes the controller's lines into the test's log, shown when
// it fails; lines after the test's end (a late delivery's) are dropped.
type testLog struct {
	t    *testing.T
	done *atomic.Bool
}

func newTestLog(t *testing.T) testLog {
	l := testLog{t: t, done: new(atomic.Bool)}
	t.Cleanup(func() { l.done.Store(true) })
	return l
}

func (l testLog) Write(p []byte) (int, error) {
	if !l.done.Load() {
		l.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// runController runs the notifications controller on ns until stop is
// called.
func runController(t *testing.T, ns string, commits notifications.RepoReader) (stop func()) {
	localcluster.Need(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- notifications.Run(ctx, notifications.Options{
			Config: testCluster.Config, Namespace: ns, Commits: commits,
			Log: slog.New(slog.NewJSONHandler(newTestLog(t), nil)),
		})
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("controller: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// TestNotifiesThroughWebhookAndEmail: an Application subscribed through
// its annotations (a webhook) and its project's (e-mail) is told about
// each sync once: the webhook gets the synced commit's message read
// through the repo server, the mail server gets the mail over STARTTLS
// with authentication, the notified annotation holds Argo CD's keys, a
// new revision is told again, a restarted controller tells nothing twice,
// and a template edited in the ConfigMap applies without a restart.
func TestNotifiesThroughWebhookAndEmail(t *testing.T) {
	ctx := context.Background()
	c := clusterClient(t, ctx)
	ns := testCluster.NewNamespace(t)
	repoDemo := gitserver.NewLocalRepo(t)
	first := repoDemo.Commit(t, "Add the guestbook", map[string]string{"guestbook/cm.yaml": "kind: ConfigMap\n"})
	mail := mailserver.Start(t)
	h := &hooks{}
	hookServer := httptest.NewServer(h)
	t.Cleanup(hookServer.Close)

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsSecret, Namespace: ns},
		StringData: map[string]string{"email-password": "mail-pw", "hook-token": "t0ken"}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsConfigMap, Namespace: ns}, Data: map[string]string{
		"service.webhook.ci": "url: " + hookServer.URL + "/$hook-token\n",
		"service.email": "host: " + mail.Host + "\nport: " + strconv.Itoa(mail.Port) +
			"\nfrom: cd@example.com\nusername: cd\npassword: $email-password\ninsecure_skip_verify: true\n",
		"context": "argocdUrl: https://cd.example.com\n",
		"trigger.on-sync-succeeded": "- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']\n" +
			"  oncePer: app.status.operationState?.syncResult?.revision\n  send: [synced]\n",
		"template.synced": `message: '{{.app.metadata.name}} synced to {{.app.status.sync.revision}}'
email:
  subject: '{{.app.metadata.name}} synced'
webhook:
  ci:
    method: POST
    path: /{{.app.metadata.name}}
    body: '{{(call .repo.GetCommitMetadata .app.status.sync.revision).Message}}'
`,
	}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns,
		Annotations: map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.email": "ops@example.com"}},
		Spec: v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}}}
	if err := c.Create(ctx, proj); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: ns,
			Annotations: map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.ci": ""}},
		Spec: v1alpha1.ApplicationSpec{Project: "web",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repoDemo.URL, Path: "guestbook", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "guestbook"}},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	synced := func(rev string) {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			t.Fatal(err)
		}
		markSynced(t, ctx, c, app, rev)
	}
	synced(first)
	commits := repo.NewService(repo.Options{Root: t.TempDir()})
	stop := runController(t, ns, commits)
	// Other writers keep changing the app while it is first told (the
	// application controller does): each change is another look, which
	// must find what was just sent.
	for i := range 20 {
		patch := []byte(`{"metadata":{"labels":{"churn":"` + strconv.Itoa(i) + `"}}}`)
		if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(25 * time.Millisecond) // the changes keep coming while the app is told
	}

	eventually.String(t, "the webhook", func() string {
		if got := h.got(); len(got) != 1 || got[0] != "POST /t0ken/guestbook Add the guestbook" {
			return strings.Join(got, " | ")
		}
		return ""
	})
	eventually.String(t, "the mail", func() string {
		msgs := mail.Messages(t)
		if len(msgs) != 1 || msgs[0].Subject != "guestbook synced" || len(msgs[0].To) != 1 || msgs[0].To[0] != "ops@example.com" ||
			strings.TrimSpace(msgs[0].Text) != "guestbook synced to "+first {
			return strconv.Itoa(len(msgs)) + " messages"
		}
		return ""
	})
	eventually.String(t, "the notified annotation", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err.Error()
		}
		state := map[string]int64{}
		_ = json.Unmarshal([]byte(app.Annotations[notifications.AnnotationNotified]), &state)
		// Argo CD's keys: oncePer value, trigger, condition, destination.
		key := first + ":on-sync-succeeded:[0]." + conditionHash
		if _, ok := state[key+":ci:"]; !ok || len(state) != 2 {
			return app.Annotations[notifications.AnnotationNotified]
		}
		if _, ok := state[key+":email:ops@example.com"]; !ok {
			return app.Annotations[notifications.AnnotationNotified]
		}
		return ""
	})

	// Restarted, it tells nothing twice.
	stop()
	runController(t, ns, commits)
	time.Sleep(2 * time.Second) // room for a second call that should not come
	if got := h.got(); len(got) != 1 {
		t.Errorf("after a restart the webhook got %d calls", len(got))
	}

	// A template edited applies without a restart; a new revision is told.
	cm.Data["template.synced"] = strings.Replace(cm.Data["template.synced"], "synced to", "now at", 1)
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the cache sees the edit first
	second := repoDemo.Commit(t, "Scale the guestbook", map[string]string{"guestbook/cm.yaml": "kind: ConfigMap\nmetadata: {}\n"})
	synced(second)
	eventually.String(t, "the second revision", func() string {
		msgs := mail.Messages(t)
		if got := h.got(); len(got) != 2 || got[1] != "POST /t0ken/guestbook Scale the guestbook" || len(msgs) != 2 ||
			strings.TrimSpace(msgs[0].Text) != "guestbook now at "+second {
			return strings.Join(got, " | ")
		}
		return ""
	})
}
