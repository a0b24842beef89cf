package notifications_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// serviceCase is one notification service under TestEveryService: a
// local server speaking the service's API, the service's options
// pointing at it, the service's part of the test's template, and what the
// server must have been sent.
type serviceCase struct {
	// service is the type, as in service.<type>[.<name>].
	service string
	// recipient is the destination the app subscribes (may be empty).
	recipient string
	// start runs the local server for the test and returns the service's
	// options (YAML; $secretKey references read secrets) and the secrets
	// they reference.
	start func(t *testing.T) (options string, secrets map[string]string, got func() []request)
	// template is the service's part of the template (YAML), if any.
	template string
	// want are texts the requests the server received must hold (each
	// in one request's body or path, as sent or URL-encoded).
	want []string
	// never are calls ("METHOD /path") the server must not have received.
	never []string
}

// serviceCases are registered by the services_<type>_test.go files.
var serviceCases []serviceCase

// request is one call a local service server received.
type request struct {
	Method, Path, Auth, Body string
}

func (r request) String() string { return r.Method + " " + r.Path + " " + r.Body }

// holds reports whether the request's body or path holds text, as sent
// or URL-encoded (form bodies).
func (r request) holds(text string) bool {
	for _, v := range []string{text, url.QueryEscape(text), url.PathEscape(text)} {
		if strings.Contains(r.Body, v) || strings.Contains(r.Path, v) {
			return true
		}
	}
	return false
}

// message is what the test's template says, rendered for its app.
const message = "guestbook synced to " + revision

// revision stands for the commit the test's app is synced to, known once
// the sync is done: want texts holding it are completed then.
const revision = "{revision}"

// recorder records the requests it answers with answer(r) (status 200
// and its body; nil answers "{}").
type recorder struct {
	mu     sync.Mutex
	reqs   []request
	answer func(r *http.Request) (int, string)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, request{Method: r.Method, Path: r.URL.RequestURI(), Auth: r.Header.Get("Authorization"), Body: string(body)})
	rec.mu.Unlock()
	status, text := http.StatusOK, "{}"
	if rec.answer != nil {
		status, text = rec.answer(r)
	}
	if strings.HasPrefix(text, "{") || strings.HasPrefix(text, "[") {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

func (rec *recorder) got() []request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.reqs)
}

// serve starts a recorder on a local HTTP server for the test.
func serve(t *testing.T, answer func(r *http.Request) (int, string)) (*recorder, string) {
	rec := &recorder{answer: answer}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

// TestEveryService: one Application, subscribed to on-sync-succeeded
// through every registered service, is synced by the application
// controller; each service's local server receives the notification
// through the service's own client, with the template's message and the
// service's part rendered for the Application.
func TestEveryService(t *testing.T) {
	if len(serviceCases) == 0 {
		t.Skip("no service registered")
	}
	ctx := context.Background()
	c := clusterClient(t, ctx)
	ns := testCluster.NewNamespace(t)
	data := map[string]string{
		"context": "argocdUrl: https://cd.example.com\n",
		"trigger.on-sync-succeeded": "- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']\n" +
			"  oncePer: app.status.operationState?.syncResult?.revision\n  send: [synced]\n",
	}
	template := "message: '{{.app.metadata.name}} synced to {{.app.status.sync.revision}}'\n"
	secrets := map[string]string{}
	subscribe := map[string]string{}
	got := map[string]func() []request{}
	for _, sc := range serviceCases {
		options, sec, g := sc.start(t)
		data["service."+sc.service] = options
		for k, v := range sec {
			secrets[k] = v
		}
		template += sc.template
		subscribe["notifications.argoproj.io/subscribe.on-sync-succeeded."+sc.service] = sc.recipient
		got[sc.service] = g
	}
	data["template.synced"] = template
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsSecret, Namespace: ns}, StringData: secrets}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsConfigMap, Namespace: ns}, Data: data}); err != nil {
		t.Fatal(err)
	}
	// A real sync: the application controller applies a commit of a local
	// Git repository, and the notifications controller tells of it.
	git := gitserver.NewLocalRepo(t)
	dest := testCluster.NewNamespace(t)
	rev := git.Commit(t, "the guestbook", map[string]string{"guestbook/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guestbook}\ndata: {a: b}\n"})
	renderer := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_ = controller.Run(ctx, controller.Options{Config: testCluster.Config, Namespace: ns, Renderer: renderer, Resync: time.Hour,
			RepoPoll: time.Second, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	}()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: ns, Annotations: subscribe},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: git.URL, Path: "guestbook", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	eventually.String(t, "the sync", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err.Error()
		}
		if op := app.Status.OperationState; op == nil || op.Phase != "Succeeded" {
			return fmt.Sprintf("operation %+v", op)
		}
		return ""
	})
	runController(t, ns, renderer)
	for _, sc := range serviceCases {
		t.Run(sc.service, func(t *testing.T) {
			eventually.String(t, "the notification through "+sc.service, func() string {
				reqs := got[sc.service]()
				for _, want := range sc.want {
					want = strings.ReplaceAll(want, revision, rev)
					if !slices.ContainsFunc(reqs, func(r request) bool { return r.holds(want) }) {
						return fmt.Sprintf("no request with %q among %v", want, reqs)
					}
				}
				for _, never := range sc.never {
					if i := slices.IndexFunc(reqs, func(r request) bool { return strings.HasPrefix(r.String(), never) }); i >= 0 {
						t.Fatalf("unexpected call %v", reqs[i])
					}
				}
				return ""
			})
		})
	}
}
