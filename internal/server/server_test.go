package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

var kubeCluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &kubeCluster))
}

type fixture struct {
	t      testing.TB
	c      client.Client
	ns     string
	srv    *Server
	base   string
	client *http.Client
}

// start runs a Server on a free port of 127.0.0.1.
func start(t testing.TB, insecure bool) *fixture {
	t.Helper()
	return startWith(t, Options{Insecure: insecure})
}

// startWith runs a Server with opts, completed with a client, a fresh
// namespace and a renderer.
func startWith(t testing.TB, opts Options) *fixture {
	t.Helper()
	return serve(t, opts, false)
}

// startCached is start with the Server reading through an informer cache
// of its namespace, as `capstan server` does.
func startCached(t testing.TB) *fixture {
	t.Helper()
	return serve(t, Options{Insecure: true}, true)
}

func serve(t testing.TB, opts Options, cached bool) *fixture {
	localcluster.Need(t)
	t.Helper()
	insecure := opts.Insecure
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Before the client: its REST mapper learns the kinds it is made with.
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(kubeCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := kubeCluster.NewNamespace(t)
	opts.Client, opts.Config, opts.Namespace = c, kubeCluster.Config, ns
	if cached {
		if opts.Client, opts.Informers, err = kube.NewCachedClient(ctx, kubeCluster.Config, ns); err != nil {
			t.Fatal(err)
		}
	}
	if opts.Renderer == nil {
		opts.Renderer = repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second})
	}
	if opts.AppSetPreview == nil { // as the server component wires it
		opts.AppSetPreview = applicationset.Previewer{Sources: applicationset.Sources{Git: opts.Renderer, Reader: opts.Client, Namespace: ns}}.Preview
	}
	srv, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ctx, l) }()
	f := &fixture{t: t, c: c, ns: ns, srv: srv, base: "http://" + l.Addr().String(), client: &http.Client{Timeout: 10 * time.Second}}
	if !insecure {
		pool := x509.NewCertPool()
		leaf, _ := x509.ParseCertificate(srv.secret.Certificate.Certificate[0])
		pool.AddCert(leaf)
		f.base = "https://" + l.Addr().String()
		f.client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	return f
}

// call sends a request and decodes the JSON answer into out.
func (f *fixture) call(method, path, body, token string, out any) int {
	f.t.Helper()
	resp := f.send(context.Background(), method, path, body, token)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			f.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

// send sends a request with a bearer token (none when empty).
func (f *fixture) send(ctx context.Context, method, path, body, token string) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, f.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // as every client does
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// adminToken logs in as admin with the initial password.
func (f *fixture) adminToken() string {
	f.t.Helper()
	var login map[string]string
	if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":"`+f.initialPassword()+`"}`, "", &login); code != 200 {
		f.t.Fatalf("admin login: %d", code)
	}
	return login["token"]
}

// apiKey issues and records an API key for account.
func (f *fixture) apiKey(account string) string {
	f.t.Helper()
	tok, err := f.srv.sessions.Create(account, 0, account+"-key")
	if err != nil {
		f.t.Fatal(err)
	}
	if err := settings.AddToken(context.Background(), f.c, f.ns, account, settings.Token{ID: account + "-key", IssuedAt: time.Now().Unix()}); err != nil {
		f.t.Fatal(err)
	}
	return tok
}

func (f *fixture) initialPassword() string {
	s := &corev1.Secret{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: settings.InitialAdminSecretName}, s); err != nil {
		f.t.Fatal(err)
	}
	return string(s.Data["password"])
}

func TestTLSVersionAndRedirect(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, false)
	var v map[string]string
	if code := f.call("GET", "/api/version", "", "", &v); code != 200 || v["Version"] == "" {
		t.Errorf("version: %d %v", code, v)
	}
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	addr := strings.TrimPrefix(f.base, "https://")
	resp, err := plain.Get("http://" + addr + "/api/version?x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "https://"+addr+"/api/version?x=1" {
		t.Errorf("plain HTTP: %d to %q, want a redirect to HTTPS", resp.StatusCode, resp.Header.Get("Location"))
	}
	// A kubelet's probe in plain HTTP is answered, not redirected.
	resp, err = plain.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("plain HTTP /healthz: %d, want 200", resp.StatusCode)
	}
}

func TestLoginSessionsAndAPIKeys(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	counts := metrics.NewServer("v0.0.0-test")
	f := startWith(t, Options{Metrics: counts})
	var failed map[string]any
	if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":"wrong"}`, "", &failed); code != 401 || failed["code"] != float64(16) {
		t.Errorf("wrong password: %d %v", code, failed)
	}
	var login map[string]string
	if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":"`+f.initialPassword()+`"}`, "", &login); code != 200 || login["token"] == "" {
		t.Fatalf("login: %d %v", code, login)
	}
	var info apiwire.UserInfo
	f.call("GET", "/api/v1/session/userinfo", "", login["token"], &info)
	if !info.LoggedIn || info.Username != "admin" || info.Issuer != "argocd" {
		t.Errorf("userinfo = %+v", info)
	}
	f.call("GET", "/api/v1/session/userinfo", "", "not-a-token", &info)
	if info.LoggedIn {
		t.Error("a bad token is logged in")
	}

	// An API key of the image updater's restricted account works until it is revoked.
	ctx := context.Background()
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.image-updater": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	key, err := f.srv.sessions.Create("image-updater", 0, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := settings.AddToken(ctx, f.c, f.ns, "image-updater", settings.Token{ID: "key-1", IssuedAt: time.Now().Unix()}); err != nil {
		t.Fatal(err)
	}
	if f.call("GET", "/api/v1/session/userinfo", "", key, &info); !info.LoggedIn || info.Username != "image-updater" {
		t.Errorf("API key: %+v", info)
	}
	if code := f.call("POST", "/api/v1/session", `{"username":"image-updater","password":"x"}`, "", nil); code != 401 {
		t.Errorf("an apiKey-only account logged in with a password: %d", code)
	}
	if err := settings.RemoveToken(ctx, f.c, f.ns, "image-updater", "key-1"); err != nil {
		t.Fatal(err)
	}
	if f.call("GET", "/api/v1/session/userinfo", "", key, &info); info.LoggedIn {
		t.Error("a revoked API key still works")
	}

	// Repeated failures lock the account for a while, even against the
	// right password.
	for range 5 {
		f.call("POST", "/api/v1/session", `{"username":"admin","password":"guess"}`, "", nil)
	}
	var locked map[string]any
	if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":"`+f.initialPassword()+`"}`, "", &locked); code != 401 ||
		!strings.Contains(locked["message"].(string), "too many failed login attempts") {
		t.Errorf("login after repeated failures: %d %v", code, locked)
	}
	// Every attempt is counted, as Argo CD's argocd_login_request_total.
	page := scrape(t, counts.Handler())
	for _, want := range []string{`argocd_login_request_total{status="success"} 1`, `argocd_login_request_total{status="failure"} 8`, `argocd_info{version="v0.0.0-test"} 1`} {
		if !strings.Contains(page, want+"\n") {
			t.Errorf("the metrics lack %s:\n%s", want, grepLines(page, "argocd_"))
		}
	}
}

// scrape reads a metrics handler's page.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// grepLines returns the lines of page that start with prefix.
func grepLines(page, prefix string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestInsecureServesPlainHTTP(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	var v map[string]string
	if code := f.call("GET", "/api/version", "", "", &v); code != 200 || v["Version"] == "" {
		t.Errorf("version over plain HTTP: %d %v", code, v)
	}
}

func TestApplicationsFollowRBAC(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false)
	for _, o := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
			Data: map[string]string{"accounts.image-updater": "apiKey", "accounts.team-a": "apiKey"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{
			"policy.csv": "p, role:image-updater, applications, get, */*, allow\ng, image-updater, role:image-updater\np, team-a, applications, get, team-a/*, allow\n"}},
	} {
		if err := testobj.Put(ctx, f.c, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []struct{ name, project string }{{"web", "team-a"}, {"db", "team-b"}} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: f.ns, Labels: map[string]string{"tier": a.name}},
			Spec: v1alpha1.ApplicationSpec{Project: a.project, Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"},
				Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git"}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	updater, teamA := f.apiKey("image-updater"), f.apiKey("team-a")
	names := func(token, query string) []string {
		var list v1alpha1.ApplicationList
		if code := f.call("GET", "/api/v1/applications"+query, "", token, &list); code != 200 {
			t.Fatalf("list%s: %d", query, code)
		}
		var out []string
		for _, a := range list.Items {
			out = append(out, a.Name)
		}
		return out
	}
	if got := names(updater, ""); strings.Join(got, ",") != "db,web" {
		t.Errorf("image-updater sees %v", got)
	}
	if got := names(teamA, ""); strings.Join(got, ",") != "web" {
		t.Errorf("team-a sees %v, want only its project's app", got)
	}
	if got := names(updater, "?projects=team-b"); strings.Join(got, ",") != "db" {
		t.Errorf("projects filter: %v", got)
	}
	if got := names(updater, "?selector=tier%3Dweb"); strings.Join(got, ",") != "web" {
		t.Errorf("selector filter: %v", got)
	}
	var app v1alpha1.Application
	if code := f.call("GET", "/api/v1/applications/web", "", teamA, &app); code != 200 || app.Spec.Project != "team-a" {
		t.Errorf("team-a gets web: %d %+v", code, app.Spec)
	}
	var e map[string]any
	if code := f.call("GET", "/api/v1/applications/db", "", teamA, &e); code != 403 || e["code"] != float64(7) {
		t.Errorf("team-a gets db: %d %v, want 403", code, e)
	}
	if code := f.call("GET", "/api/v1/applications/nope", "", updater, nil); code != 404 {
		t.Errorf("a missing app for a reader of every project: %d, want 404", code)
	}
	if code := f.call("GET", "/api/v1/applications/nope", "", teamA, nil); code != 403 {
		t.Errorf("a missing app for team-a: %d, want 403 (names do not leak)", code)
	}
	if code := f.call("GET", "/api/v1/applications", "", "", nil); code != 401 {
		t.Errorf("no token: %d, want 401", code)
	}
}

func TestSyncAndDelete(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.default": "role:readonly"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.reader": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		name string
		auto bool
	}{{"manual", false}, {"auto", true}, {"keep", false}, {"drop", false}} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"},
				Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git", TargetRevision: "main"}}}
		if a.auto {
			app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
		}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	admin := f.adminToken()
	reader := f.apiKey("reader")

	var app v1alpha1.Application
	if code := f.call("POST", "/api/v1/applications/manual/sync", `{"revision":"main","prune":true}`, admin, &app); code != 200 ||
		app.Operation == nil || app.Operation.InitiatedBy.Username != "admin" || !app.Operation.Sync.Prune {
		t.Fatalf("sync: %d %+v", code, app.Operation)
	}
	if code := f.call("POST", "/api/v1/applications/manual/sync", `{}`, admin, nil); code != 400 {
		t.Errorf("a second sync while one is pending: %d, want 400", code)
	}
	if code := f.call("POST", "/api/v1/applications/keep/sync", `{}`, reader, nil); code != 403 {
		t.Errorf("a readonly account syncs: %d, want 403", code)
	}
	var e map[string]any
	if code := f.call("POST", "/api/v1/applications/auto/sync", `{"revision":"v1.0"}`, admin, &e); code != 400 || !strings.Contains(e["message"].(string), "auto-sync currently set to main") {
		t.Errorf("sync of an automated app to another revision: %d %v", code, e)
	}

	if code := f.call("DELETE", "/api/v1/applications/keep?cascade=false", "", admin, nil); code != 200 {
		t.Fatalf("delete without cascade: %d", code)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "keep"}, &v1alpha1.Application{}); err == nil {
		t.Error("an app deleted without cascade is still there")
	}
	if code := f.call("DELETE", "/api/v1/applications/drop", "", reader, nil); code != 403 {
		t.Errorf("a readonly account deletes: %d", code)
	}
	if code := f.call("DELETE", "/api/v1/applications/drop", "", admin, nil); code != 200 {
		t.Fatalf("cascading delete: %d", code)
	}
	got := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "drop"}, got); err != nil || got.DeletionTimestamp == nil || !slices.Contains(got.Finalizers, resourcesFinalizer) {
		t.Errorf("a cascading delete leaves the app to the controller's finalizer: %v %+v", err, got.ObjectMeta)
	}
}

func TestCreateApplication(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false) // makes the default project
	admin := f.adminToken()
	body := func(path string) string {
		return `{"metadata":{"name":"guestbook"},"spec":{"project":"default","source":{"repoURL":"https://git.example.com/x.git","path":"` + path +
			`"},"destination":{"server":"https://kubernetes.default.svc","namespace":"guestbook"}}}`
	}
	var app v1alpha1.Application
	if code := f.call("POST", "/api/v1/applications", body("a"), admin, &app); code != 200 || app.Namespace != f.ns || app.UID == "" {
		t.Fatalf("create: %d %+v", code, app.ObjectMeta)
	}
	if code := f.call("POST", "/api/v1/applications", body("a"), admin, nil); code != 200 {
		t.Errorf("creating the same app again: %d, want 200", code)
	}
	var e map[string]any
	if code := f.call("POST", "/api/v1/applications", body("b"), admin, &e); code != 400 || !strings.Contains(e["message"].(string), "use upsert flag") {
		t.Errorf("a different spec without upsert: %d %v", code, e)
	}
	if code := f.call("POST", "/api/v1/applications?upsert=true", body("b"), admin, &app); code != 200 || app.Spec.Source.Path != "b" {
		t.Errorf("upsert: %d %+v", code, app.Spec.Source)
	}
	unknown := strings.Replace(body("a"), `"project":"default"`, `"project":"nope"`, 1)
	if code := f.call("POST", "/api/v1/applications", unknown, admin, &e); code != 400 || !strings.Contains(e["message"].(string), "project nope which does not exist") {
		t.Errorf("unknown project: %d %v", code, e)
	}
	if code := f.call("POST", "/api/v1/applications", `{"spec":{`, admin, nil); code != 400 {
		t.Errorf("malformed body: %d", code)
	}
}

func TestAccountsAndTokens(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.image-updater": "apiKey", "accounts.alice": "login"}}); err != nil {
		t.Fatal(err)
	}
	admin := f.adminToken()

	var list apiwire.AccountList
	if code := f.call("GET", "/api/v1/account", "", admin, &list); code != 200 || len(list.Items) != 3 {
		t.Fatalf("accounts: %d %+v", code, list)
	}
	var tok map[string]string
	if code := f.call("POST", "/api/v1/account/image-updater/token", `{"id":"ci","expiresIn":3600}`, admin, &tok); code != 200 || tok["token"] == "" {
		t.Fatalf("admin creates a token for image-updater: %d %v", code, tok)
	}
	key := tok["token"]
	var info apiwire.UserInfo
	if f.call("GET", "/api/v1/session/userinfo", "", key, &info); info.Username != "image-updater" {
		t.Errorf("the new key: %+v", info)
	}
	if code := f.call("POST", "/api/v1/account/image-updater/token", `{"id":"ci"}`, admin, nil); code != 409 {
		t.Errorf("a second token with the same id: %d, want 409", code)
	}
	if code := f.call("POST", "/api/v1/account/alice/token", `{}`, admin, nil); code != 400 {
		t.Errorf("a token for an account without apiKey: %d, want 400", code)
	}
	if code := f.call("POST", "/api/v1/account/image-updater/token", `{}`, key, &tok); code != 200 {
		t.Errorf("an account makes a token for itself: %d", code)
	}
	if code := f.call("DELETE", "/api/v1/account/admin/token/x", "", key, nil); code != 403 {
		t.Errorf("image-updater manages admin's tokens: %d, want 403", code)
	}
	var can map[string]string
	if f.call("GET", "/api/v1/account/can-i/applications/sync/default/guestbook", "", admin, &can); can["value"] != "yes" {
		t.Errorf("admin can-i sync: %v", can)
	}
	if f.call("GET", "/api/v1/account/can-i/applications/sync/default/guestbook", "", key, &can); can["value"] != "no" {
		t.Errorf("image-updater can-i sync: %v", can)
	}
	if code := f.call("DELETE", "/api/v1/account/image-updater/token/ci", "", admin, nil); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	if f.call("GET", "/api/v1/session/userinfo", "", key, &info); info.LoggedIn {
		t.Error("a revoked key still works")
	}
}

func TestPasswordChangeEndsOlderSessions(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, false)
	var login map[string]string
	old := f.initialPassword()
	f.call("POST", "/api/v1/session", `{"username":"admin","password":"`+old+`"}`, "", &login)
	before := login["token"]
	time.Sleep(1100 * time.Millisecond) // sessions and password times are in seconds
	if code := f.call("PUT", "/api/v1/account/password", `{"currentPassword":"wrong","newPassword":"a-new-password"}`, before, nil); code != 401 {
		t.Errorf("a wrong current password: %d, want 401", code)
	}
	if code := f.call("PUT", "/api/v1/account/password", `{"currentPassword":"`+old+`","newPassword":"short"}`, before, nil); code != 400 {
		t.Errorf("a short password: %d, want 400", code)
	}
	if code := f.call("PUT", "/api/v1/account/password", `{"currentPassword":"`+old+`","newPassword":"a-new-password"}`, before, nil); code != 200 {
		t.Fatalf("change: %d", code)
	}
	var info apiwire.UserInfo
	if f.call("GET", "/api/v1/session/userinfo", "", before, &info); info.LoggedIn {
		t.Error("a session from before the change still works")
	}
	if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":"`+old+`"}`, "", nil); code != 401 {
		t.Errorf("the old password still logs in: %d", code)
	}
	if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":"a-new-password"}`, "", &login); code != 200 {
		t.Errorf("the new password: %d", code)
	}
	if f.call("GET", "/api/v1/session/userinfo", "", login["token"], &info); !info.LoggedIn {
		t.Error("a session after the change does not work")
	}
}

func TestProjects(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.viewer": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "p, viewer, projects, get, team-*, allow"}}); err != nil {
		t.Fatal(err)
	}
	admin := f.adminToken()
	viewer := f.apiKey("viewer")
	for _, name := range []string{"team-a", "platform"} {
		body := `{"project":{"metadata":{"name":"` + name + `"},"spec":{"sourceRepos":["*"],"destinations":[{"server":"*","namespace":"*"}]}}}`
		if code := f.call("POST", "/api/v1/projects", body, admin, nil); code != 200 {
			t.Fatalf("create %s: %d", name, code)
		}
	}
	if code := f.call("POST", "/api/v1/projects", `{"project":{"metadata":{"name":"team-a"}}}`, admin, nil); code != 409 {
		t.Errorf("creating an existing project without upsert: %d, want 409", code)
	}
	if code := f.call("POST", "/api/v1/projects", `{"project":{"metadata":{"name":"x"}}}`, viewer, nil); code != 403 {
		t.Errorf("viewer creates a project: %d", code)
	}
	var list v1alpha1.AppProjectList
	if f.call("GET", "/api/v1/projects", "", viewer, &list); len(list.Items) != 1 || list.Items[0].Name != "team-a" {
		t.Errorf("viewer sees %+v", list.Items)
	}
	if code := f.call("GET", "/api/v1/projects/platform", "", viewer, nil); code != 403 {
		t.Errorf("viewer gets platform: %d", code)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "uses-team-a", Namespace: f.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "team-a", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	if code := f.call("DELETE", "/api/v1/projects/team-a", "", admin, nil); code != 400 {
		t.Errorf("deleting a project in use: %d, want 400", code)
	}
	if code := f.call("DELETE", "/api/v1/projects/platform", "", admin, nil); code != 200 {
		t.Errorf("deleting an unused project: %d", code)
	}
}

// TestHealthzAndLogout: /healthz answers ok without a session, and
// /api/logout drops the session cookie and sends the browser to /login.
func TestHealthzAndLogout(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, false)
	resp := f.send(context.Background(), http.MethodGet, "/healthz", "", "")
	data, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(data) != "ok" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, data)
	}
	noRedirect := *f.client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest(http.MethodGet, f.base+"/api/logout", nil)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" || len(cookies) != 1 || cookies[0].Name != tokenCookie || cookies[0].MaxAge >= 0 {
		t.Errorf("/api/logout: %d %q %v", resp.StatusCode, resp.Header.Get("Location"), cookies)
	}
}

// TestSessionDuration: users.session.duration in argocd-cm sets how long
// a login's token lasts; without it, 24 hours.
func TestSessionDuration(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	expiresIn := func() time.Duration {
		t.Helper()
		var login map[string]string
		if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":"`+f.initialPassword()+`"}`, "", &login); code != 200 {
			t.Fatalf("login: %d %v", code, login)
		}
		claims, err := f.srv.sessions.Parse(login["token"])
		if err != nil {
			t.Fatal(err)
		}
		return time.Until(claims.ExpiresAt.Time).Round(time.Minute)
	}
	if got := expiresIn(); got != 24*time.Hour {
		t.Errorf("by default the session lasts %s", got)
	}
	if err := testobj.Put(context.Background(), f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{settings.SessionDurationKey: "1h"}}); err != nil {
		t.Fatal(err)
	}
	if got := expiresIn(); got != time.Hour {
		t.Errorf("with users.session.duration 1h the session lasts %s", got)
	}
}

// TestAnonymousUsers: users.anonymous.enabled lets requests without a
// session in, as policy.default alone allows; a bad token is still
// refused, and without the setting no session is refused.
func TestAnonymousUsers(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	ctx := context.Background()
	if code := f.call("GET", "/api/v1/applications", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("no session, anonymous users off: %d", code)
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{settings.AnonymousEnabledKey: "true"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{"policy.default": "role:readonly"}},
	} {
		if err := testobj.Put(ctx, f.c, cm); err != nil {
			t.Fatal(err)
		}
	}
	if code := f.call("GET", "/api/v1/applications", "", "", nil); code != http.StatusOK {
		t.Errorf("no session, anonymous users on, read-only default: %d", code)
	}
	app := `{"metadata":{"name":"anon"},"spec":{"project":"default","source":{"repoURL":"https://git.example.com/a.git","path":"."},"destination":{"server":"https://kubernetes.default.svc","namespace":"x"}}}`
	if code := f.call("POST", "/api/v1/applications", app, "", nil); code != http.StatusForbidden {
		t.Errorf("an anonymous create with a read-only default: %d", code)
	}
	if code := f.call("GET", "/api/v1/applications", "", "not-a-token", nil); code != http.StatusUnauthorized {
		t.Errorf("a bad token, anonymous users on: %d", code)
	}
}

// TestPasswordPattern: argocd-cm's passwordPattern decides which new
// passwords are accepted, with Argo CD's message.
func TestPasswordPattern(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	var login map[string]string
	old := f.initialPassword()
	f.call("POST", "/api/v1/session", `{"username":"admin","password":"`+old+`"}`, "", &login)
	if err := testobj.Put(context.Background(), f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{settings.PasswordPatternKey: "^[a-z-]{4,}[0-9]+$"}}); err != nil {
		t.Fatal(err)
	}
	var refused map[string]any
	if code := f.call("PUT", "/api/v1/account/password", `{"currentPassword":"`+old+`","newPassword":"no-digits-at-all"}`, login["token"], &refused); code != 400 ||
		refused["message"] != "New password does not match the following expression: ^[a-z-]{4,}[0-9]+$." {
		t.Errorf("a password against the pattern: %d %v", code, refused)
	}
	if code := f.call("PUT", "/api/v1/account/password", `{"currentPassword":"`+old+`","newPassword":"digits-7"}`, login["token"], nil); code != 200 {
		t.Errorf("a password the pattern allows: %d", code)
	}
}

// TestPublicSettings: argocd-cm's public settings reach GET
// /api/v1/settings under Argo CD's names, with its defaults.
func TestPublicSettings(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	var got map[string]any
	f.call("GET", "/api/v1/settings", "", "", &got)
	if got["appLabelKey"] != "app.kubernetes.io/instance" || got["passwordPattern"] != "^.{8,32}$" || got["userLoginsDisabled"] != false || got["execEnabled"] != false {
		t.Errorf("defaults: %v", got)
	}
	if err := testobj.Put(context.Background(), f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
		"statusbadge.enabled": "true", "statusbadge.url": "https://badges.example.com/", "ui.bannercontent": "Maintenance at noon",
		"ui.bannerpermanent": "true", "ga.trackingid": "UA-1", "help.chatUrl": "https://chat.example.com", "help.download.linux-amd64": "https://dl.example.com/argocd",
		"admin.enabled": "false", "exec.enabled": "true", "help.chatText": "Ask the platform team", "ui.bannerposition": "bottom",
		"installationID": "blue",
	}}); err != nil {
		t.Fatal(err)
	}
	got = nil
	f.call("GET", "/api/v1/settings", "", "", &got)
	help, _ := got["help"].(map[string]any)
	ga, _ := got["googleAnalytics"].(map[string]any)
	if got["statusBadgeEnabled"] != true || got["statusBadgeRootUrl"] != "https://badges.example.com/" || got["uiBannerContent"] != "Maintenance at noon" ||
		got["uiBannerPermanent"] != true || got["userLoginsDisabled"] != true || got["execEnabled"] != true ||
		ga["trackingID"] != "UA-1" || ga["anonymizeUsers"] != true || help["chatUrl"] != "https://chat.example.com" ||
		help["chatText"] != "Ask the platform team" || got["uiBannerPosition"] != "bottom" || got["installationID"] != "blue" {
		t.Errorf("configured: %v", got)
	}
}

// TestTLSMinimumVersion: with --tlsminversion 1.3, a client that speaks
// at most TLS 1.2 is refused at the handshake; TLS 1.3 is served.
func TestTLSMinimumVersion(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startWith(t, Options{TLS: certs.TLSPolicy{MinVersion: "1.3"}})
	addr := strings.TrimPrefix(f.base, "https://")
	for _, highest := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: highest}) //nolint:gosec // the test's own server
		if err == nil {
			conn.Close()
		}
		if (err == nil) != (highest == tls.VersionTLS13) {
			t.Errorf("a client of TLS up to %x: %v", highest, err)
		}
	}
	if _, err := New(context.Background(), Options{TLS: certs.TLSPolicy{MinVersion: "1.4"}, Client: f.c, Config: kubeCluster.Config, Renderer: f.srv.opts.Renderer, Namespace: f.ns}); err == nil {
		t.Error("a TLS version that does not exist was accepted")
	}
}
