package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// The regression tests of the tenant review's findings, one each, named
// after what the finding broke. Finding 1 (checkouts) is tested in
// repo/archive and repo/git, finding 8 (credential scoping) in settings.

// tenants is a server with two projects: team-a, which may deploy only
// into its own namespace from any repository and no cluster-scoped kind,
// and team-b; an app a1 of team-a and b1 of team-b from one repository;
// a read-only API key and team-a's role token.
type tenants struct {
	*fixture
	admin, readonly, teamA string
	destA, other           string
	remote                 *gitserver.Repo
}

func newTenants(t *testing.T, files map[string]string) *tenants {
	localcluster.Need(t)
	t.Helper()
	f := start(t, true)
	ctx := context.Background()
	tn := &tenants{fixture: f, destA: kubeCluster.NewNamespace(t), other: kubeCluster.NewNamespace(t)}
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{"policy.default": "role:readonly"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
			Data: map[string]string{"accounts.viewer": "apiKey", "resource.sensitive.mask.annotations": "token"}},
		&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: f.ns}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: tn.destA}},
			Roles: []v1alpha1.ProjectRole{{Name: "ci", Policies: []string{
				"p, proj:team-a:ci, applications, get, team-a/*, allow",
				"p, proj:team-a:ci, applications, update, team-a/*, allow",
			}}}}},
		&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Namespace: f.ns}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}}},
	} {
		if err := testobj.Put(ctx, f.c, obj); err != nil {
			t.Fatal(err)
		}
	}
	if files == nil {
		files = map[string]string{"x/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"}
	}
	tn.remote = gitserver.NewLocalRepo(t)
	tn.remote.Commit(t, "one", files)
	for _, a := range []struct{ name, project, dest string }{{"a1", "team-a", tn.destA}, {"b1", "team-b", tn.other}} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: a.project, Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: a.dest},
				Source: &v1alpha1.ApplicationSource{RepoURL: tn.remote.URL, Path: "x"}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	tn.admin, tn.readonly = f.adminToken(), f.apiKey("viewer")
	var tok map[string]string
	if code := f.call("POST", "/api/v1/projects/team-a/roles/ci/token", `{"id":"pipeline"}`, tn.admin, &tok); code != 200 {
		t.Fatalf("project role token: %d", code)
	}
	tn.teamA = tok["token"]
	return tn
}

func TestServerSideDiffReadsOnlyManagedResources(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	ctx := context.Background()
	secretCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: tn.other}, Data: map[string]string{"password": "hunter2"}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tenant-probe-" + tn.ns}}
	inDest := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unmanaged", Namespace: tn.destA}, Data: map[string]string{"password": "hunter3"}}
	for _, obj := range []client.Object{secretCM, role, inDest} {
		if err := tn.c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = tn.c.Delete(context.Background(), role) })
	body := fmt.Sprintf(`{"targetManifests":[%q,%q,%q]}`,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: elsewhere, namespace: "+tn.other+"}\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: "+role.Name+"}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unmanaged}\n")
	var out struct {
		Items []struct{ Kind, Name, LiveState string }
	}
	if code := tn.call("POST", "/api/v1/applications/a1/server-side-diff", body, tn.readonly, &out); code != 200 {
		t.Fatalf("server-side diff: %d", code)
	}
	if len(out.Items) != 3 {
		t.Fatalf("server-side diff: %d items, want 3", len(out.Items))
	}
	for _, it := range out.Items {
		if it.LiveState != "null" {
			t.Errorf("%s %s: a live state the app does not manage came back: %.200s", it.Kind, it.Name, it.LiveState)
		}
	}
}

func TestClusterTokensNeverShown(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	spec := `{"server":"https://probe.example.com","name":"probe","config":{"bearerToken":"s3cr3t-token"}}`
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cluster-probe", Namespace: tn.ns,
		Labels:      map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster},
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"stringData":{"config":"{\"bearerToken\":\"s3cr3t-token\"}"}}`}},
		StringData: map[string]string{"server": "https://probe.example.com", "name": "probe", "config": `{"bearerToken":"s3cr3t-token"}`}}
	if err := tn.c.Create(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/clusters", "/api/v1/clusters/https%3A%2F%2Fprobe.example.com"} {
		resp := tn.send(context.Background(), "GET", path, "", tn.readonly)
		body := readAll(t, resp)
		if resp.StatusCode != 200 || strings.Contains(body, "s3cr3t-token") || strings.Contains(body, "last-applied") {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	withAnnotation := strings.Replace(spec, `"name":"probe"`, `"name":"probe2","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"x"}`, 1)
	withAnnotation = strings.Replace(withAnnotation, "probe.example.com", "probe2.example.com", 1)
	if code := tn.call("POST", "/api/v1/clusters", withAnnotation, tn.admin, nil); code != http.StatusBadRequest {
		t.Errorf("a cluster setting the last-applied annotation: %d, want 400", code)
	}
}

func TestManifestsMaskSecrets(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, map[string]string{"x/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: creds
  annotations: {token: annotated-value, app: shown}
stringData: {username: plain-value}
data: {password: ZW5jb2RlZC12YWx1ZQ==}
`})
	resp := tn.send(context.Background(), "GET", "/api/v1/applications/a1/manifests", "", tn.readonly)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(body, "++++++++") || !strings.Contains(body, "shown") {
		t.Fatalf("manifests: %d %s", resp.StatusCode, body)
	}
	for _, secret := range []string{"plain-value", "ZW5jb2RlZC12YWx1ZQ==", "annotated-value"} {
		if strings.Contains(body, secret) {
			t.Errorf("manifests show %q: %s", secret, body)
		}
	}
	resp = tn.send(context.Background(), "GET", "/api/v1/applications/a1/managed-resources", "", tn.readonly)
	if body := readAll(t, resp); strings.Contains(body, "annotated-value") || strings.Contains(body, "plain-value") {
		t.Errorf("managed resources show a secret value: %s", body)
	}
}

func TestRoleGroupCannotInjectPolicy(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	ctx := context.Background()
	hostile := "x, proj:team-a:ci\ng, proj:team-a:ci, role:admin\ng, y"
	body := fmt.Sprintf(`{"project":{"metadata":{"name":"team-a"},"spec":{"sourceRepos":["*"],"destinations":[{"server":"*","namespace":%q}],`+
		`"roles":[{"name":"ci","policies":["p, proj:team-a:ci, applications, get, team-a/*, allow"],"groups":[%q],"jwtTokens":[{"iat":1,"id":"pipeline"}]}]}}}`, tn.destA, hostile)
	for _, group := range []string{hostile, "a,b", "a\"b", "a\rb"} {
		b := strings.Replace(body, fmt.Sprintf("%q", hostile), fmt.Sprintf("%q", group), 1)
		if code := tn.call("PUT", "/api/v1/projects/team-a", b, tn.admin, nil); code != http.StatusBadRequest {
			t.Errorf("a role group %q: %d, want 400", group, code)
		}
	}
	// Written around the API, the group is left out of the policy.
	proj := &v1alpha1.AppProject{}
	if err := tn.c.Get(ctx, client.ObjectKey{Namespace: tn.ns, Name: "team-a"}, proj); err != nil {
		t.Fatal(err)
	}
	proj.Spec.Roles[0].Groups = []string{hostile}
	proj.Spec.Roles[0].Policies = append(proj.Spec.Roles[0].Policies, "p, proj:team-a:ci, applications, get, team-a/*, allow\np, proj:team-a:ci, projects, create, *, allow")
	if err := tn.c.Update(ctx, proj); err != nil {
		t.Fatal(err)
	}
	if code := tn.call("POST", "/api/v1/projects", `{"project":{"metadata":{"name":"escalated"}}}`, tn.teamA, nil); code != http.StatusForbidden {
		t.Errorf("the role token created a project: %d, want 403", code)
	}
	if code := tn.call("POST", "/api/v1/account/viewer/token", `{}`, tn.teamA, nil); code != http.StatusForbidden {
		t.Errorf("the role token minted another account's key: %d, want 403", code)
	}
	if code := tn.call("GET", "/api/v1/applications/a1", "", tn.teamA, nil); code != 200 {
		t.Errorf("the role's own policies stop working: %d", code)
	}
}

func TestAppDetailsNeedsTheApp(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, map[string]string{"x/Chart.yaml": "apiVersion: v2\nname: x\nversion: 1.0.0\n", "x/values.yaml": "password: in-values\n",
		"other/Chart.yaml": "apiVersion: v2\nname: o\nversion: 1.0.0\n", "other/values.yaml": "password: other-team\n"})
	ctx := context.Background()
	if err := testobj.Put(ctx, tn.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: tn.ns}, Data: map[string]string{
		"policy.csv": "p, role:repo-reader, repositories, get, *, allow\ng, reader, role:repo-reader\n" +
			"p, role:a-dev, repositories, get, *, allow\np, role:a-dev, applications, get, team-a/*, allow\ng, a-dev, role:a-dev\n"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, tn.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: tn.ns},
		Data: map[string]string{"accounts.viewer": "apiKey", "accounts.reader": "apiKey", "accounts.a-dev": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	reader, aDev := tn.apiKey("reader"), tn.apiKey("a-dev")
	path := "/api/v1/repositories/" + strings.ReplaceAll(tn.remote.URL, "/", "%2F") + "/appdetails"
	query := func(srcPath, project, app string) string {
		return fmt.Sprintf(`{"source":{"repoURL":%q,"path":%q},"appName":%q,"appProject":%q}`, tn.remote.URL, srcPath, app, project)
	}
	for _, tc := range []struct {
		name, token, body string
		want              int
	}{
		{"repositories get only, no app", reader, query("x", "", ""), http.StatusForbidden},
		{"repositories get only, the app", reader, query("x", "team-a", "a1"), http.StatusForbidden},
		{"a source the app never had", aDev, query("other", "team-a", "a1"), http.StatusForbidden},
		{"another project than the app's", tn.admin, query("x", "team-b", "a1"), http.StatusForbidden},
		{"a new app the caller may not create", aDev, query("x", "team-a", "new"), http.StatusForbidden},
		{"the app's own source", aDev, query("x", "team-a", "a1"), http.StatusOK},
		{"a new app, as admin", tn.admin, query("other", "team-b", "new"), http.StatusOK},
	} {
		resp := tn.send(ctx, "POST", path, tc.body, tc.token)
		body := readAll(t, resp)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, resp.StatusCode, tc.want, body)
		}
		if tc.want != http.StatusOK && strings.Contains(body, "password") {
			t.Errorf("%s: values came back: %s", tc.name, body)
		}
	}
}

func TestValidateNeverSendsStoredCredentialsToAChosenProxy(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	ctx := context.Background()
	var hits atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer proxy.Close()
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "org-creds", Namespace: tn.ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepoCredentials}},
			StringData: map[string]string{"url": "http://git.example.com/org", "username": "u", "password": "template-password"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b-repo", Namespace: tn.ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}},
			StringData: map[string]string{"url": "http://git.example.com/org/b.git", "username": "u", "password": "team-b-password", "project": "team-b"}},
	} {
		if err := tn.c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := testobj.Put(ctx, tn.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: tn.ns}, Data: map[string]string{
		"policy.csv": "p, role:a-repos, repositories, create, team-a/*, allow\ng, a-admin, role:a-repos\n"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, tn.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: tn.ns},
		Data: map[string]string{"accounts.a-admin": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	aAdmin := tn.apiKey("a-admin")
	for _, repoURL := range []string{"http://git.example.com/org/b.git", "http://git.example.com/org/x.git"} {
		for _, extra := range []string{`"proxy":%q`, `"proxy":%q,"insecure":true`} {
			body := fmt.Sprintf(`{"project":"team-a",`+extra+`}`, proxy.URL)
			path := "/api/v1/repositories/" + strings.ReplaceAll(repoURL, "/", "%2F") + "/validate"
			if code := tn.call("POST", path, body, aAdmin, nil); code != http.StatusBadRequest {
				t.Errorf("validate %s with %s: %d, want 400", repoURL, body, code)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the caller's proxy was sent %d requests", n)
	}
}

func TestValidateFalseKeepsProjectChecks(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	forbidden := fmt.Sprintf(`{"metadata":{"name":"sneaky"},"spec":{"project":"team-a","destination":{"server":"https://kubernetes.default.svc","namespace":%q},`+
		`"source":{"repoURL":%q,"path":"x"}}}`, tn.other, tn.remote.URL)
	if code := tn.call("POST", "/api/v1/applications?validate=false", forbidden, tn.admin, nil); code != http.StatusBadRequest {
		t.Errorf("create with a destination the project forbids and validate=false: %d, want 400", code)
	}
	spec := fmt.Sprintf(`{"project":"team-a","destination":{"server":"https://kubernetes.default.svc","namespace":%q},"source":{"repoURL":%q,"path":"x"}}`, tn.other, tn.remote.URL)
	if code := tn.call("PUT", "/api/v1/applications/a1/spec?validate=false", spec, tn.teamA, nil); code != http.StatusBadRequest {
		t.Errorf("update to a destination the project forbids and validate=false: %d, want 400", code)
	}
}

func TestPatchCannotSetOperation(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	patch := `{"patch":"{\"operation\":{\"initiatedBy\":{\"username\":\"admin\"},\"sync\":{\"syncOptions\":[\"Replace=true\"]}},\"metadata\":{\"labels\":{\"x\":\"y\"}}}"}`
	if code := tn.call("PATCH", "/api/v1/applications/a1", patch, tn.teamA, nil); code != 200 {
		t.Fatalf("patch: %d", code)
	}
	app := &v1alpha1.Application{}
	if err := tn.c.Get(context.Background(), client.ObjectKey{Namespace: tn.ns, Name: "a1"}, app); err != nil {
		t.Fatal(err)
	}
	if app.Operation != nil || app.Labels["x"] != "y" {
		t.Errorf("after the patch: operation %+v, labels %v; want no operation and the label", app.Operation, app.Labels)
	}
}

func TestCookieRequestsMustComeFromThisServer(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	newApp := func(name string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"project":"team-b","destination":{"server":"https://kubernetes.default.svc","namespace":%q},"source":{"repoURL":%q,"path":"x"}}}`,
			name, tn.other, tn.remote.URL)
	}
	for _, tc := range []struct {
		name, contentType, origin string
		want                      int
	}{
		{"text/plain from elsewhere", "text/plain", "https://evil.example", http.StatusUnsupportedMediaType},
		{"a form", "application/x-www-form-urlencoded", "", http.StatusUnsupportedMediaType},
		{"no content type", "", "", http.StatusUnsupportedMediaType},
		{"JSON from elsewhere", "application/json", "https://evil.example", http.StatusForbidden},
		{"JSON, foreign referer", "application/json", "referer:https://evil.example/page", http.StatusForbidden},
		{"JSON from this server", "application/json", tn.base, http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", tn.base+"/api/v1/applications", strings.NewReader(newApp("csrf-"+fmt.Sprint(len(tc.name)))))
		req.AddCookie(&http.Cookie{Name: tokenCookie, Value: tn.admin})
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		if referer, ok := strings.CutPrefix(tc.origin, "referer:"); ok {
			req.Header.Set("Referer", referer)
		} else if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := tn.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, resp.StatusCode, tc.want, body)
		}
	}
	// An Authorization header of another scheme does not make the cookie's
	// request a bearer-token one: the cookie authenticates it, so it is
	// checked.
	req, _ := http.NewRequest("POST", tn.base+"/api/v1/applications", strings.NewReader(newApp("basic")))
	req.AddCookie(&http.Cookie{Name: tokenCookie, Value: tn.admin})
	req.Header.Set("Authorization", "Basic YWRtaW46eA==")
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Origin", "https://evil.example")
	if resp, err := tn.client.Do(req); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("a cookie request with a Basic Authorization header: %v %v, want 415", resp, err)
	}
	// A bearer token is not sent by browsers on their own: no such checks.
	req, _ = http.NewRequest("POST", tn.base+"/api/v1/applications", strings.NewReader(newApp("bearer")))
	req.Header.Set("Authorization", "Bearer "+tn.admin)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := tn.client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("a bearer-token request: %v %v", resp, err)
	}
}

func TestReturnURLStaysOnThisServer(t *testing.T) {
	t.Parallel()
	base := "https://cd.example.com"
	for raw, want := range map[string]string{
		"/applications":                   "/applications",
		"/applications?x=1":               "/applications?x=1",
		`/\evil.example/phish`:            "/",
		"//evil.example/phish":            "/",
		"https://evil.example/":           "/",
		"javascript:alert(1)":             "/",
		"https://cd.example.com/apps":     "https://cd.example.com/apps",
		"https://cd.example.com.evil.io/": "/",
		"http://cd.example.com/apps":      "/",
		"https://u@cd.example.com/apps":   "/",
		"/\t/evil.example":                "/",
		"":                                "/",
	} {
		if got := safeReturnURL(raw, base); got != want {
			t.Errorf("safeReturnURL(%q) = %q, want %q", raw, got, want)
		}
	}
	if got := safeReturnURL("https://cd.example.com/argo/apps", "https://cd.example.com/argo"); got != "https://cd.example.com/argo/apps" {
		t.Errorf("below a base path: %q", got)
	}
	if got := safeReturnURL("https://cd.example.com/other", "https://cd.example.com/argo"); got != "/" {
		t.Errorf("outside the base path: %q", got)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// manage records objects as a1's managed resources, as the controller
// would after a sync, so the API counts them as the app's.
func (tn *tenants) manage(t *testing.T, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	app := &v1alpha1.Application{}
	if err := tn.c.Get(ctx, client.ObjectKey{Namespace: tn.ns, Name: "a1"}, app); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := tn.c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		gvk, err := tn.c.GroupVersionKindFor(obj)
		if err != nil {
			t.Fatal(err)
		}
		app.Status.Resources = append(app.Status.Resources, v1alpha1.ResourceStatus{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Namespace: obj.GetNamespace(), Name: obj.GetName(), Status: v1alpha1.SyncStatusCodeSynced})
	}
	if err := tn.c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
}

func TestActionsCreateOnlyWhatTheProjectAllows(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	ctx := context.Background()
	proj := &v1alpha1.AppProject{}
	if err := tn.c.Get(ctx, client.ObjectKey{Namespace: tn.ns, Name: "team-a"}, proj); err != nil {
		t.Fatal(err)
	}
	proj.Spec.NamespaceResourceBlacklist = []metav1.GroupKind{{Group: "batch", Kind: "Job"}}
	if err := tn.c.Update(ctx, proj); err != nil {
		t.Fatal(err)
	}
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: tn.destA}, Spec: batchv1.CronJobSpec{Schedule: "0 0 * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
	tn.manage(t, cron)
	body := fmt.Sprintf(`{"namespace":%q,"resourceName":"nightly","version":"v1","group":"batch","kind":"CronJob","action":"create-job"}`, tn.destA)
	resp := tn.send(ctx, "POST", "/api/v1/applications/a1/resource/actions/v2", body, tn.admin)
	if msg := readAll(t, resp); resp.StatusCode == 200 || !strings.Contains(msg, "Job") {
		t.Errorf("an action creating a kind the project forbids: %d %s", resp.StatusCode, msg)
	}
	var jobs batchv1.JobList
	if err := tn.c.List(ctx, &jobs, client.InNamespace(tn.destA)); err != nil || len(jobs.Items) != 0 {
		t.Errorf("a Job was created anyway: %d %v", len(jobs.Items), err)
	}
	proj.Spec.NamespaceResourceBlacklist = nil
	if err := tn.c.Update(ctx, proj); err != nil {
		t.Fatal(err)
	}
	if code := tn.call("POST", "/api/v1/applications/a1/resource/actions/v2", body, tn.admin, nil); code != 200 {
		t.Errorf("the action once the project allows Jobs: %d", code)
	}
}

func TestResourceChangesActAsTheSyncs(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: tn.destA}, Data: map[string]string{"k": "v"}}
	tn.manage(t, cm)
	if err := testobj.Put(ctx, tn.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: tn.ns},
		Data: map[string]string{"application.sync.impersonation.enabled": "true"}}); err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{}
	if err := tn.c.Get(ctx, client.ObjectKey{Namespace: tn.ns, Name: "team-a"}, proj); err != nil {
		t.Fatal(err)
	}
	// The service account has no rights in the namespace.
	proj.Spec.DestinationServiceAccounts = []v1alpha1.ApplicationDestinationServiceAccount{{Server: "*", Namespace: "*", DefaultServiceAccount: "deployer"}}
	if err := tn.c.Update(ctx, proj); err != nil {
		t.Fatal(err)
	}
	query := "?namespace=" + tn.destA + "&resourceName=cm&version=v1&kind=ConfigMap"
	if code := tn.call("POST", "/api/v1/applications/a1/resource"+query+"&patchType=application/merge-patch%2Bjson", `"{\"data\":{\"k\":\"changed\"}}"`, tn.admin, nil); code == 200 {
		t.Errorf("a patch beyond the service account's rights: %d", code)
	}
	if code := tn.call("DELETE", "/api/v1/applications/a1/resource"+query, "", tn.admin, nil); code == 200 {
		t.Errorf("a delete beyond the service account's rights: %d", code)
	}
	got := &corev1.ConfigMap{}
	if err := tn.c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil || got.Data["k"] != "v" {
		t.Errorf("the ConfigMap changed: %v %v", got.Data, err)
	}
	// With rights given to the service account, the same calls work.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: tn.destA},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: tn.destA},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: tn.destA}}}
	for _, obj := range []client.Object{role, binding} {
		if err := tn.c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if code := tn.call("POST", "/api/v1/applications/a1/resource"+query+"&patchType=application/merge-patch%2Bjson", `"{\"data\":{\"k\":\"changed\"}}"`, tn.admin, nil); code != 200 {
		t.Errorf("a patch the service account may make: %d", code)
	}
}

// TestTreeShowsOnlyPermittedResources: a resource the app's status lists
// but its project does not let it reach (its source named another
// tenant's object) is neither read nor shown, as Argo CD drops such live
// objects.
func TestTreeShowsOnlyPermittedResources(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: tn.other}, Data: map[string]string{"k": "other-tenant"}}
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "own", Namespace: tn.destA}, Data: map[string]string{"k": "v"}}
	tn.manage(t, foreign, own)
	resp := tn.send(context.Background(), "GET", "/api/v1/applications/a1/resource-tree", "", tn.readonly)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || strings.Contains(body, "foreign") || !strings.Contains(body, `"own"`) {
		t.Errorf("resource tree: %d %s", resp.StatusCode, body)
	}
	query := "?namespace=" + tn.other + "&resourceName=foreign&version=v1&kind=ConfigMap"
	if code := tn.call("GET", "/api/v1/applications/a1/resource"+query, "", tn.readonly, nil); code != http.StatusNotFound {
		t.Errorf("reading the foreign ConfigMap: %d, want 404", code)
	}
	body = fmt.Sprintf(`{"targetManifests":[%q]}`, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: foreign, namespace: "+tn.other+"}\n")
	resp = tn.send(context.Background(), "POST", "/api/v1/applications/a1/server-side-diff", body, tn.readonly)
	if diff := readAll(t, resp); strings.Contains(diff, "other-tenant") {
		t.Errorf("server-side diff of the foreign ConfigMap: %s", diff)
	}
}
