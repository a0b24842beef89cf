package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// The permission matrix: every route the API serves, and every RPC
// method, called as each kind of caller, with the answer Argo CD's RBAC
// and its handlers give. Rows are by route; a route registered without a
// row fails the test, so a new endpoint comes with its row.

// The callers, in the order of a row's want.
const (
	asAdmin    = iota // the admin account
	asReadonly        // an API key of role:readonly
	asProjectA        // project team-a's role token, acting mostly on team-b's objects
	asRepoA           // an account that administers team-a's repositories only
	asOnePerm         // an API key holding one permission: applications get team-b/b1
	asAnon            // no token
	callers
)

var callerNames = [callers]string{"admin", "readonly", "project-A", "repo-admin-A", "one-permission", "anonymous"}

// planted are values the matrix puts in Secrets, repositories and
// clusters: no answer to any caller may hold one.
var planted = []string{"PLANTED-SECRET-VALUE", "PLANTED-REPO-PASSWORD", "PLANTED-TEMPLATE-PASSWORD", "PLANTED-CLUSTER-TOKEN", "UExBTlRFRC1FTkNPREVE"}

// matrixRow is one call and what each caller gets; 0 in want means "the
// same as admin" is not assumed: every cell is written out.
type matrixRow struct {
	method, path, body string
	want               [callers]int
	// after undoes what a successful call changed, so the next caller
	// meets the same state.
	after func()
}

// everyone is a want of one status for all callers.
func everyone(status int) [callers]int {
	var w [callers]int
	for i := range w {
		w[i] = status
	}
	return w
}

// matrix is the fixture: two teams, their apps, a repository and a
// cluster of team-b with credentials in them, and the callers' tokens.
type matrix struct {
	*fixture
	tokens       [callers]string
	destA, destB string
	repoURL      string
}

func newMatrix(t *testing.T) *matrix {
	localcluster.Need(t)
	t.Helper()
	f := startWith(t, Options{Insecure: true, HydratorEnabled: true, EnableProxyExtension: true})
	ctx := context.Background()
	m := &matrix{fixture: f, destA: kubeCluster.NewNamespace(t), destB: kubeCluster.NewNamespace(t)}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "apps", map[string]string{
		"x/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n",
		"x/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: PLANTED-SECRET-VALUE}\ndata: {e: UExBTlRFRC1FTkNPREVE}\n",
	})
	m.repoURL = remote.URL
	project := func(name, dest string, roles ...v1alpha1.ProjectRole) *v1alpha1.AppProject {
		return &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: dest}}, Roles: roles}}
	}
	secret := func(name, kind string, data map[string]string, annotations map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Annotations: annotations,
			Labels: map[string]string{v1alpha1.LabelSecretType: kind}}, StringData: data}
	}
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
			"accounts.viewer": "apiKey", "accounts.repo-admin-a": "apiKey", "accounts.oneperm": "apiKey", "exec.enabled": "true"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{"policy.csv": strings.Join([]string{
			"g, viewer, role:readonly",
			"p, role:repo-admin-a, repositories, *, team-a/*, allow",
			"p, role:repo-admin-a, repositories, get, *, allow",
			"g, repo-admin-a, role:repo-admin-a",
			"p, oneperm, applications, get, team-b/b1, allow",
		}, "\n")}},
		project("team-a", m.destA, v1alpha1.ProjectRole{Name: "ci", Policies: []string{
			"p, proj:team-a:ci, applications, *, team-a/*, allow",
			"p, proj:team-a:ci, exec, create, team-a/*, allow",
			"p, proj:team-a:ci, logs, get, team-a/*, allow",
		}}),
		project("team-b", m.destB),
		secret("repo-b", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://git.example.com/b.git", "username": "b", "password": "PLANTED-REPO-PASSWORD", "project": "team-b"}, nil),
		secret("creds-org", v1alpha1.SecretTypeRepoCredentials, map[string]string{"url": "https://git.example.com/org", "username": "o", "password": "PLANTED-TEMPLATE-PASSWORD"}, nil),
		secret("write-repo-b", v1alpha1.SecretTypeRepositoryWrite, map[string]string{"url": "https://git.example.com/b.git", "username": "b", "password": "PLANTED-REPO-PASSWORD", "project": "team-b"}, nil),
		secret("write-creds-org", v1alpha1.SecretTypeRepoWriteCredentials, map[string]string{"url": "https://git.example.com/org", "username": "o", "password": "PLANTED-TEMPLATE-PASSWORD"}, nil),
		secret("cluster-b", v1alpha1.SecretTypeCluster, map[string]string{"server": "https://b.example.com", "name": "b", "project": "team-b",
			"config": `{"bearerToken":"PLANTED-CLUSTER-TOKEN"}`}, map[string]string{corev1.LastAppliedConfigAnnotation: `{"config":"PLANTED-CLUSTER-TOKEN"}`}),
	} {
		if err := testobj.Put(ctx, f.c, obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []struct{ name, project, dest string }{{"a1", "team-a", m.destA}, {"b1", "team-b", m.destB}} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: a.project, Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: a.dest},
				Source: &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "x"}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	// b1 manages a Secret whose values must stay masked when read live.
	live := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: m.destB}, StringData: map[string]string{"k": "PLANTED-SECRET-VALUE"}}
	if err := f.c.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	b1 := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "b1"}, b1); err != nil {
		t.Fatal(err)
	}
	b1.Status.Resources = []v1alpha1.ResourceStatus{{Version: "v1", Kind: "Secret", Namespace: m.destB, Name: "s", Status: v1alpha1.SyncStatusCodeSynced}}
	if err := f.c.Update(ctx, b1); err != nil {
		t.Fatal(err)
	}
	m.tokens[asAdmin] = f.adminToken()
	m.tokens[asReadonly] = f.apiKey("viewer")
	m.tokens[asRepoA] = f.apiKey("repo-admin-a")
	m.tokens[asOnePerm] = f.apiKey("oneperm")
	var tok map[string]string
	if code := f.call("POST", "/api/v1/projects/team-a/roles/ci/token", `{"id":"pipeline"}`, m.tokens[asAdmin], &tok); code != 200 {
		t.Fatalf("project role token: %d", code)
	}
	m.tokens[asProjectA] = tok["token"]
	return m
}

// probe makes one call and returns its status and (the start of) its
// answer; a stream is read for a moment only.
func (m *matrix) probe(method, path, body, token string) (int, string) {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, m.base+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := &http.Client{Transport: m.client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		m.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A stream never ends: read what it sends in half a second.
		go func() { time.Sleep(500 * time.Millisecond); cancel() }()
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(data)
}

func esc(s string) string { return url.PathEscape(s) }

// matrixRows are the rows: the objects named are team-b's unless the row
// says otherwise, so project-A and repo-admin-A show they stay in their
// project.
func (m *matrix) rows() []matrixRow {
	ctx := context.Background()
	del := func(obj client.Object) func() {
		return func() { _ = m.c.Delete(ctx, obj) }
	}
	delSecrets := func() {
		_ = m.c.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(m.ns), client.MatchingLabels{"capstan.test/matrix": "created"})
	}
	_ = delSecrets
	clearOp := func(name string) func() {
		return func() {
			app := &v1alpha1.Application{}
			if err := m.c.Get(ctx, client.ObjectKey{Namespace: m.ns, Name: name}, app); err == nil && app.Operation != nil {
				orig := app.DeepCopy()
				app.Operation = nil
				_ = m.c.Patch(ctx, app, client.MergeFrom(orig))
			}
		}
	}
	b1, a1 := "/api/v1/applications/b1", "/api/v1/applications/a1"
	specB := fmt.Sprintf(`{"project":"team-b","destination":{"server":"https://kubernetes.default.svc","namespace":%q},"source":{"repoURL":%q,"path":"x"}}`, m.destB, m.repoURL)
	specA := fmt.Sprintf(`{"project":"team-a","destination":{"server":"https://kubernetes.default.svc","namespace":%q},"source":{"repoURL":%q,"path":"x"}}`, m.destA, m.repoURL)
	newApp := func(project, dest string) string {
		return fmt.Sprintf(`{"metadata":{"name":"new-app"},"spec":{"project":%q,"destination":{"server":"https://kubernetes.default.svc","namespace":%q},"source":{"repoURL":%q,"path":"x"}}}`,
			project, dest, m.repoURL)
	}
	newAppObj := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "new-app", Namespace: m.ns}}
	newProj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "new-proj", Namespace: m.ns}}
	newSet := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "new-set", Namespace: m.ns}}
	appSet := func(project string) string {
		return `{"metadata":{"name":"new-set"},"spec":{"generators":[{"list":{"elements":[{"env":"dev"}]}}],` +
			`"template":{"metadata":{"name":"{{env}}-x"},"spec":{"project":"` + project + `","source":{"repoURL":"` + m.repoURL + `","path":"x"},` +
			`"destination":{"server":"https://kubernetes.default.svc","namespace":"` + m.destB + `"}}}}}`
	}
	repoB := esc("https://git.example.com/b.git")
	inCluster := esc("https://kubernetes.default.svc")
	clusterB := esc("https://b.example.com")
	resource := "/resource?namespace=" + m.destB + "&resourceName=s&version=v1&kind=Secret"
	allow := func(codes ...int) [callers]int { return [callers]int(codes) }

	return []matrixRow{
		// Public: the same for everyone.
		{method: "GET", path: "/api/version", want: everyone(200)},
		{method: "GET", path: "/healthz", want: everyone(200)},
		{method: "GET", path: "/api/v1/settings", want: everyone(200)},
		{method: "GET", path: "/swagger.json", want: everyone(200)},
		{method: "GET", path: "/swagger-ui", want: everyone(200)},
		{method: "GET", path: "/api/badge?name=b1", want: everyone(200)},
		{method: "GET", path: "/", want: everyone(200)},
		{method: "GET", path: "/api/dex/.well-known/openid-configuration", want: everyone(404)}, // no dex.config
		{method: "GET", path: "/auth/login", want: everyone(400)},
		{method: "GET", path: "/auth/callback?code=x&state=y", want: everyone(400)},
		{method: "GET", path: "/api/logout", want: everyone(http.StatusSeeOther)},
		// Argo CD's logout: it ends the session its cookie carries
		// (TestLogoutRevokesEverywhere), never one sent as a bearer token.
		{method: "GET", path: "/auth/logout", want: everyone(http.StatusSeeOther)},
		{method: "POST", path: "/auth/logout", want: everyone(http.StatusSeeOther)},
		{method: "POST", path: "/api/webhook", body: `{}`, want: everyone(400)},
		{method: "POST", path: "/api/v1/session", body: `{"username":"nobody","password":"x"}`, want: everyone(401)},
		{method: "DELETE", path: "/api/v1/session", want: everyone(200)},
		{method: "GET", path: "/api/v1/session/userinfo", want: everyone(200)},
		// A proxy extension call without the headers naming its
		// Application (TestProxyExtensions has the rest).
		{method: "GET", path: "/extensions/metrics/x", want: allow(400, 400, 400, 400, 400, 401)},

		// Applications of team-b.
		{method: "GET", path: "/api/v1/applications", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: b1, want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: a1, want: allow(200, 200, 200, 403, 403, 401)},
		{method: "POST", path: "/api/v1/applications", body: newApp("team-b", m.destB), want: allow(200, 403, 403, 403, 403, 401), after: del(newAppObj)},
		{method: "POST", path: "/api/v1/applications", body: newApp("team-a", m.destB), want: allow(400, 403, 400, 403, 403, 401), after: del(newAppObj)},
		{method: "PUT", path: b1, body: `{"metadata":{"name":"b1"},"spec":` + specB + `}`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "PUT", path: b1 + "/spec", body: specB, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "PUT", path: a1 + "/spec", body: specA, want: allow(200, 403, 200, 403, 403, 401)},
		{method: "PATCH", path: b1, body: `{"patch":"{\"metadata\":{\"labels\":{\"x\":\"y\"}}}","patchType":"merge"}`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/applications/missing", want: allow(404, 403, 403, 403, 403, 401)},
		{method: "POST", path: b1 + "/sync", body: `{"dryRun":true}`, want: allow(200, 403, 403, 403, 403, 401), after: clearOp("b1")},
		{method: "POST", path: b1 + "/rollback", body: `{"id":1}`, want: allow(400, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: b1 + "/operation", want: allow(400, 403, 403, 403, 403, 401)},
		{method: "GET", path: b1 + "/events", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + "/manifests", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "POST", path: "/api/v1/applications/manifestsWithFiles", body: `{}`, want: allow(400, 400, 400, 400, 400, 401)},
		{method: "GET", path: b1 + "/managed-resources", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + "/resource-tree", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + resource, want: allow(200, 200, 403, 403, 200, 401)},
		{method: "POST", path: b1 + resource + "&patchType=application/merge-patch%2Bjson", body: `"{\"metadata\":{\"labels\":{\"x\":\"y\"}}}"`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: b1 + "/resource?namespace=" + m.destB + "&resourceName=missing&version=v1&kind=Secret", want: allow(404, 403, 403, 403, 403, 401)},
		{method: "GET", path: b1 + "/resource/actions" + strings.TrimPrefix(resource, "/resource"), want: allow(200, 200, 403, 403, 200, 401)},
		{method: "POST", path: b1 + "/resource/actions" + strings.TrimPrefix(resource, "/resource"), body: `"restart"`, want: allow(400, 403, 403, 403, 403, 401)},
		{method: "POST", path: b1 + "/resource/actions/v2", body: fmt.Sprintf(`{"namespace":%q,"resourceName":"s","version":"v1","kind":"Secret","action":"restart"}`, m.destB),
			want: allow(400, 403, 403, 403, 403, 401)},
		{method: "GET", path: b1 + "/logs?container=x&namespace=" + m.destB, want: allow(200, 200, 403, 403, 403, 401)},
		{method: "GET", path: b1 + "/pods/missing/logs?container=x&namespace=" + m.destB, want: allow(404, 404, 403, 403, 403, 401)},
		{method: "GET", path: "/terminal?pod=p&container=c&appName=b1&projectName=team-b&namespace=" + m.destB, want: allow(400, 403, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/stream/applications", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/stream/applications/b1/resource-tree", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + "/syncwindows", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + "/server-side-diff", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "POST", path: b1 + "/server-side-diff", body: `{"targetManifests":[]}`, want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + "/links", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + "/resource/links" + strings.TrimPrefix(resource, "/resource"), want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + "/revisions/HEAD/metadata", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: b1 + "/revisions/HEAD/chartdetails", want: allow(400, 400, 403, 403, 400, 401)},
		{method: "GET", path: b1 + "/revisions/HEAD/ocimetadata", want: allow(400, 400, 403, 403, 400, 401)},
		{method: "GET", path: "/api/v1/ui/applications", want: allow(200, 200, 200, 200, 200, 401)},

		// Projects.
		{method: "GET", path: "/api/v1/projects", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/projects/team-b", want: allow(200, 200, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/projects/team-b/detailed", want: allow(200, 200, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/projects", body: `{"project":{"metadata":{"name":"new-proj"}}}`, want: allow(200, 403, 403, 403, 403, 401), after: del(newProj)},
		{method: "PUT", path: "/api/v1/projects/team-b", body: fmt.Sprintf(`{"project":{"metadata":{"name":"team-b"},"spec":{"sourceRepos":["*"],"destinations":[{"server":"*","namespace":%q}]}}}`, m.destB),
			want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/projects/missing", want: allow(404, 403, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/projects/team-b/roles/ci/token", body: `{}`, want: allow(404, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/projects/team-a/roles/ci/token/0?id=not-issued", want: allow(200, 403, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/projects/team-b/syncwindows", want: allow(200, 200, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/projects/team-b/links", want: allow(200, 200, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/projects/team-b/globalprojects", want: allow(200, 200, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/projects/team-b/events", want: allow(200, 200, 403, 403, 403, 401)},

		// ApplicationSets of team-b.
		{method: "GET", path: "/api/v1/applicationsets", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "POST", path: "/api/v1/applicationsets", body: appSet("team-b"), want: allow(200, 403, 403, 403, 403, 401), after: del(newSet)},
		{method: "POST", path: "/api/v1/applicationsets", body: appSet("{{env}}"), want: allow(400, 400, 400, 400, 400, 401)},
		{method: "GET", path: "/api/v1/applicationsets/missing", want: allow(404, 404, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/applicationsets/missing/resource-tree", want: allow(404, 404, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/applicationsets/missing/events", want: allow(404, 404, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/stream/applicationsets", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "POST", path: "/api/v1/applicationsets/generate", body: `{"applicationSet":` + appSet("team-b") + `}`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/applicationsets/generate", body: `{"applicationSet":` + appSet("{{env}}") + `}`, want: allow(400, 400, 400, 400, 400, 401)},
		{method: "DELETE", path: "/api/v1/applicationsets/missing", want: allow(404, 403, 403, 403, 403, 401)},

		// Repositories: team-b's scoped one, and exploring the app's.
		{method: "GET", path: "/api/v1/repositories", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/repositories/" + repoB, want: allow(200, 200, 403, 200, 403, 401)},
		{method: "POST", path: "/api/v1/repositories", body: `{"repo":"https://charts.example.com","type":"helm","name":"x","project":"team-b"}`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/repositories", body: `{"repo":"https://charts.example.com","type":"helm","name":"x","project":"team-a"}`, want: allow(200, 403, 403, 200, 403, 401),
			after: m.deleteRepo("https://charts.example.com")},
		{method: "PUT", path: "/api/v1/repositories/" + repoB, body: `{"repo":"https://git.example.com/b.git","type":"helm","project":"team-b","password":"PLANTED-REPO-PASSWORD"}`,
			want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/repositories/" + esc("https://git.example.com/missing.git"), want: allow(404, 403, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/repositories/" + repoB + "/validate", body: `{"type":"helm","project":"team-b"}`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/repositories/" + esc(m.repoURL) + "/refs", want: allow(200, 200, 403, 200, 403, 401)},
		{method: "GET", path: "/api/v1/repositories/" + esc(m.repoURL) + "/oci-tags", want: allow(400, 400, 403, 400, 403, 401)},
		{method: "GET", path: "/api/v1/repositories/" + esc(m.repoURL) + "/apps?appProject=team-b&appName=b1", want: allow(200, 403, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/repositories/" + esc("https://charts.example.invalid") + "/helmcharts", want: allow(400, 400, 403, 400, 403, 401)},
		{method: "POST", path: "/api/v1/repositories/" + esc(m.repoURL) + "/appdetails", body: fmt.Sprintf(`{"source":{"repoURL":%q,"path":"x"},"appName":"b1","appProject":"team-b"}`, m.repoURL),
			want: allow(200, 200, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/repocreds", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/repocreds/" + esc("https://git.example.com/org"), want: allow(200, 200, 403, 200, 403, 401)},
		{method: "POST", path: "/api/v1/repocreds", body: `{"url":"https://git.example.com/other"}`, want: allow(200, 403, 403, 403, 403, 401),
			after: m.deleteRepo("https://git.example.com/other")},
		{method: "PUT", path: "/api/v1/repocreds/" + esc("https://git.example.com/org"), body: `{"url":"https://git.example.com/org","username":"o","password":"PLANTED-TEMPLATE-PASSWORD"}`,
			want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/repocreds/" + esc("https://git.example.com/missing"), want: allow(404, 403, 403, 403, 403, 401)},

		// The source hydrator's push credentials: team-b's and a template.
		// The repository admin of team-a holds "repositories" only.
		{method: "GET", path: "/api/v1/write-repositories", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/write-repositories/" + repoB, want: allow(200, 200, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/write-repositories", body: `{"repo":"https://charts.example.com","type":"helm","project":"team-b","username":"u","password":"p"}`,
			want: allow(200, 403, 403, 403, 403, 401), after: m.deleteRepo("https://charts.example.com")},
		{method: "POST", path: "/api/v1/write-repositories", body: `{"repo":"https://charts.example.com","type":"helm","project":"team-b"}`, want: allow(400, 403, 403, 403, 403, 401)},
		{method: "PUT", path: "/api/v1/write-repositories/" + repoB, body: `{"repo":"https://git.example.com/b.git","type":"helm","project":"team-b","username":"b","password":"PLANTED-REPO-PASSWORD"}`,
			want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/write-repositories/" + esc("https://git.example.com/missing.git"), want: allow(404, 403, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/write-repositories/" + repoB + "/validate", body: `{"type":"helm","project":"team-b"}`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/write-repocreds", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/write-repocreds/" + esc("https://git.example.com/org"), want: allow(200, 200, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/write-repocreds", body: `{"url":"https://git.example.com/other","username":"u","password":"p"}`, want: allow(200, 403, 403, 403, 403, 401),
			after: m.deleteRepo("https://git.example.com/other")},
		{method: "PUT", path: "/api/v1/write-repocreds/" + esc("https://git.example.com/org"), body: `{"url":"https://git.example.com/org","username":"o","password":"PLANTED-TEMPLATE-PASSWORD"}`,
			want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/write-repocreds/" + esc("https://git.example.com/missing"), want: allow(404, 403, 403, 403, 403, 401)},

		// Clusters: team-b's.
		{method: "GET", path: "/api/v1/clusters", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/clusters/" + clusterB, want: allow(200, 200, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/clusters/" + inCluster, want: allow(200, 200, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/clusters", body: `{"server":"https://other.example.com:6443","project":"team-b"}`, want: allow(200, 403, 403, 403, 403, 401),
			after: m.deleteCluster("https://other.example.com:6443")},
		{method: "PUT", path: "/api/v1/clusters/" + clusterB + "?updatedFields=name", body: `{"name":"b"}`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/clusters/" + esc("https://missing.example.com"), want: allow(404, 403, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/clusters/" + inCluster + "/rotate-auth", want: allow(400, 403, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/clusters/" + clusterB + "/invalidate-cache", want: allow(200, 403, 403, 403, 403, 401)},

		// Accounts.
		{method: "GET", path: "/api/v1/account", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/account/oneperm", want: allow(200, 200, 403, 403, 200, 401)},
		{method: "GET", path: "/api/v1/account/can-i/applications/get/team-b/b1", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "PUT", path: "/api/v1/account/password", body: `{"name":"viewer","currentPassword":"wrong","newPassword":"long-enough-1"}`, want: allow(401, 401, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/account/oneperm/token", body: `{}`, want: allow(200, 403, 403, 403, 200, 401)},
		{method: "DELETE", path: "/api/v1/account/oneperm/token/not-issued", want: allow(404, 403, 403, 403, 404, 401)},

		// Settings held in ConfigMaps.
		{method: "GET", path: "/api/v1/settings/plugins", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/certificates", want: allow(200, 200, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/certificates", body: `{"items":[]}`, want: allow(200, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/certificates?hostNamePattern=missing.example.com", want: allow(200, 403, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/gpgkeys", want: allow(200, 200, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/gpgkeys/0000000000000000", want: allow(404, 404, 403, 403, 403, 401)},
		{method: "POST", path: "/api/v1/gpgkeys", body: `{"publickey":{"keyData":"not a key"}}`, want: allow(400, 403, 403, 403, 403, 401)},
		{method: "DELETE", path: "/api/v1/gpgkeys?keyID=0000000000000000", want: allow(404, 403, 403, 403, 403, 401)},
		{method: "GET", path: "/api/v1/notifications/services", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/notifications/triggers", want: allow(200, 200, 200, 200, 200, 401)},
		{method: "GET", path: "/api/v1/notifications/templates", want: allow(200, 200, 200, 200, 200, 401)},
	}
}

// deleteRepo removes the repository (or template) Secret of url.
func (m *matrix) deleteRepo(repoURL string) func() {
	return func() {
		for _, kind := range []string{v1alpha1.SecretTypeRepository, v1alpha1.SecretTypeRepoCredentials, v1alpha1.SecretTypeRepositoryWrite, v1alpha1.SecretTypeRepoWriteCredentials} {
			all, _ := settings.RepositorySecrets(context.Background(), m.c, m.ns, kind)
			for _, r := range all {
				if r.URL == repoURL {
					_ = m.c.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: r.SecretName, Namespace: m.ns}})
				}
			}
		}
	}
}

// deleteCluster removes the cluster Secret of server.
func (m *matrix) deleteCluster(server string) func() {
	return func() {
		var list corev1.SecretList
		_ = m.c.List(context.Background(), &list, client.InNamespace(m.ns), client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster})
		for i := range list.Items {
			if string(list.Items[i].Data["server"]) == server {
				_ = m.c.Delete(context.Background(), &list.Items[i])
			}
		}
	}
}

// TestPermissionMatrix calls every route as every caller and compares the
// status with the row's; no answer may hold a planted secret; and every
// registered route has a row.
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	m := newMatrix(t)
	rows := m.rows()
	covered := map[string]bool{}
	record := os.Getenv("CAPSTAN_MATRIX_RECORD") != ""
	cells := 0
	for _, row := range rows {
		req, _ := http.NewRequest(row.method, row.path, nil)
		_, pattern := m.srv.mux.Handler(req)
		covered[pattern] = true
		var got [callers]int
		for who := range callers {
			status, body := m.probe(row.method, row.path, row.body, m.tokens[who])
			got[who] = status
			cells++
			if status != row.want[who] && !record {
				t.Errorf("%s %s as %s: %d, want %d: %.300s", row.method, row.path, callerNames[who], status, row.want[who], body)
			}
			for _, secret := range planted {
				if strings.Contains(body, secret) {
					t.Errorf("%s %s as %s: the answer holds %s", row.method, row.path, callerNames[who], secret)
				}
			}
			if row.after != nil {
				row.after()
			}
		}
		if record && got != row.want {
			fmt.Printf("MATRIX %s %s got %v want %v\n", row.method, row.path, got, row.want)
		}
	}
	// Argo CD's REST operations Capstan does not serve answer 501 to
	// everyone; they need no row.
	unimplemented := 0
	var missing []string
	for _, p := range m.srv.mux.patterns {
		if covered[p] || strings.Contains(p, "Service/") {
			continue
		}
		method, path, _ := strings.Cut(p, " ")
		probe := strings.NewReplacer("{p1}", "x", "{p2}", "x", "{p3}", "x").Replace(path)
		if status, _ := m.probe(method, probe, "", m.tokens[asAdmin]); status == http.StatusNotImplemented {
			unimplemented++
			continue
		}
		missing = append(missing, p)
	}
	sort.Strings(missing)
	for _, p := range missing {
		t.Errorf("route %s has no row in the permission matrix", p)
	}
	t.Logf("permission matrix: %d routes with rows, %d rows × %d callers = %d calls; %d routes unimplemented (501 for all)",
		len(covered), len(rows), callers, cells, unimplemented)
	m.rpcMatrix(t, rows)
}
