package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/session"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestRBACMatrix calls every REST endpoint as each kind of caller and
// checks the answer's status: admin; readonly (the default role); the
// image updater's restricted role as Image Updater documents it; a project role token;
// and no token, an expired token and a forged one. The RPC methods make
// these same calls (grpc.go), so they answer alike.
func TestRBACMatrix(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	ctx := context.Background()
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{
			"policy.default": "role:readonly",
			"policy.csv": "    # ロールと認可スコープを定義する\n" +
				"    p, role:image-updater, applications, get, */*, allow\n" +
				"    p, role:image-updater, applications, update, */*, allow\n" +
				"    g, image-updater, role:image-updater\n",
		}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
			Data: map[string]string{"accounts.image-updater": "apiKey", "accounts.viewer": "apiKey"}},
		&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: f.ns}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			Roles: []v1alpha1.ProjectRole{{Name: "ci", Policies: []string{
				"p, proj:team-a:ci, applications, get, team-a/*, allow",
				"p, proj:team-a:ci, applications, sync, team-a/*, allow",
			}}}}},
	} {
		if err := testobj.Put(ctx, f.c, obj); err != nil {
			t.Fatal(err)
		}
	}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"x/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	for _, a := range []struct{ name, project string }{{"a1", "team-a"}, {"b1", "default"}} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: a.project, Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"},
				Source: &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "x"}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	admin := f.adminToken()
	var tok map[string]string
	if code := f.call("POST", "/api/v1/projects/team-a/roles/ci/token", `{"id":"pipeline"}`, admin, &tok); code != 200 {
		t.Fatalf("project role token: %d", code)
	}
	sign := func(key []byte, exp time.Time) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, session.Claims{Issuer: session.Issuer, Subject: "admin",
			IssuedAt: jwt.NewNumericDate(exp.Add(-time.Hour)), ExpiresAt: jwt.NewNumericDate(exp)}).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	callers := []struct{ name, token string }{
		{"admin", admin},
		{"readonly", f.apiKey("viewer")},
		{"custom", f.apiKey("image-updater")},
		{"project", tok["token"]},
		{"anonymous", ""},
		{"expired", sign(f.srv.secret.SecretKey, time.Now().Add(-time.Minute))},
		{"forged", sign([]byte("not the server key"), time.Now().Add(time.Hour))},
	}

	clearOperation := func() {
		for _, name := range []string{"a1", "b1"} {
			app := &v1alpha1.Application{}
			if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, app); err == nil && app.Operation != nil {
				orig := app.DeepCopy()
				app.Operation = nil
				_ = f.c.Patch(ctx, app, client.MergeFrom(orig))
			}
		}
	}
	deleteSecrets := func() {
		_ = f.c.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(f.ns), client.HasLabels{v1alpha1.LabelSecretType})
	}
	deleteCreated := func() {
		_ = f.c.Delete(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "new-app", Namespace: f.ns}})
		_ = f.c.Delete(ctx, &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "new-proj", Namespace: f.ns}})
	}
	newApp := `{"metadata":{"name":"new-app"},"spec":{"project":"default","destination":{"server":"https://kubernetes.default.svc","namespace":"x"},"source":{"repoURL":"https://git.example.com/x.git","path":"x"}}}`
	spec := fmt.Sprintf(`{"project":"team-a","destination":{"server":"https://kubernetes.default.svc","namespace":"x"},"source":{"repoURL":%q,"path":"x"}}`, remote.URL)
	inCluster := strings.ReplaceAll("https://kubernetes.default.svc", "/", "%2F")
	missingRepo := strings.ReplaceAll("https://git.example.com/missing.git", "/", "%2F")

	// Expected statuses in the order of callers; the three last are always
	// 401 except for the public endpoints, which answer every caller alike.
	rows := []struct {
		method, path, body string
		want               [4]int // admin, readonly, custom, project
		public             bool
		after              func()
	}{
		{"GET", "/api/version", "", [4]int{200, 200, 200, 200}, true, nil},
		{"GET", "/api/v1/settings", "", [4]int{200, 200, 200, 200}, true, nil},
		{"GET", "/auth/login", "", [4]int{400, 400, 400, 400}, true, nil},     // no SSO configured
		{"POST", "/api/webhook", `{}`, [4]int{400, 400, 400, 400}, true, nil}, // no event header: not a webhook
		{"DELETE", "/api/v1/session", "", [4]int{200, 200, 200, 200}, true, nil},
		{"POST", "/api/v1/session", `{"username":"nobody","password":"x"}`, [4]int{401, 401, 401, 401}, true, nil},
		{"GET", "/auth/callback?code=x&state=y", "", [4]int{400, 400, 400, 400}, true, nil},
		{"GET", "/api/v1/session/userinfo", "", [4]int{200, 200, 200, 200}, true, nil},
		{"GET", "/api/v1/stream/applications", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/applications/a1/manifests", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/applications/a1/managed-resources", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/applications/b1/managed-resources", "", [4]int{200, 200, 200, 403}, false, nil},
		{"GET", "/api/v1/applications/a1/resource?kind=ConfigMap&version=v1&namespace=x&resourceName=cm", "", [4]int{404, 404, 404, 404}, false, nil},
		{"GET", "/api/v1/applications/b1/resource?kind=ConfigMap&version=v1&namespace=x&resourceName=cm", "", [4]int{404, 404, 404, 403}, false, nil},
		{"PUT", "/api/v1/applications/a1", fmt.Sprintf(`{"metadata":{"name":"a1"},"spec":%s}`, spec), [4]int{200, 403, 200, 403}, false, nil},
		{"PATCH", "/api/v1/applications/a1", `{"patch":"{\"metadata\":{\"labels\":{\"x\":\"y\"}}}"}`, [4]int{200, 403, 200, 403}, false, nil},
		{"POST", "/api/v1/applications/a1/rollback", `{"id":0}`, [4]int{400, 403, 403, 400}, false, nil}, // no history yet
		{"PUT", "/api/v1/projects/team-a", `{"project":{"metadata":{"name":"team-a"},"spec":{"sourceRepos":["*"],"destinations":[{"server":"*","namespace":"*"}],` +
			`"roles":[{"name":"ci","policies":["p, proj:team-a:ci, applications, get, team-a/*, allow","p, proj:team-a:ci, applications, sync, team-a/*, allow"],` +
			`"jwtTokens":[{"iat":1,"id":"pipeline"}]}]}}}`, [4]int{200, 403, 403, 403}, false, nil},
		{"DELETE", "/api/v1/projects/no-such-project", "", [4]int{404, 403, 403, 403}, false, nil},
		{"DELETE", "/api/v1/projects/team-a/roles/ci/token/0?id=not-issued", "", [4]int{200, 403, 403, 403}, false, nil},
		{"GET", "/api/v1/repositories/" + missingRepo, "", [4]int{404, 404, 404, 404}, false, nil},
		{"DELETE", "/api/v1/repositories/" + missingRepo, "", [4]int{404, 403, 403, 403}, false, nil},
		{"POST", "/api/v1/repocreds", `{"repo":"https://git.example.com/org"}`, [4]int{200, 403, 403, 403}, false, deleteSecrets},
		{"GET", "/api/v1/repocreds/" + missingRepo, "", [4]int{404, 404, 404, 404}, false, nil},
		{"DELETE", "/api/v1/repocreds/" + missingRepo, "", [4]int{404, 403, 403, 403}, false, nil},
		{"DELETE", "/api/v1/clusters/" + strings.ReplaceAll("https://missing.example.com", "/", "%2F"), "", [4]int{404, 403, 403, 403}, false, nil},
		{"POST", "/api/v1/clusters/" + inCluster + "/rotate-auth", "", [4]int{400, 403, 403, 403}, false, nil}, // in-cluster has no token to rotate
		{"PUT", "/api/v1/account/password", `{"name":"viewer","currentPassword":"wrong","newPassword":"long-enough"}`, [4]int{401, 401, 403, 403}, false, nil},
		{"DELETE", "/api/v1/account/image-updater/token/not-issued", "", [4]int{404, 403, 404, 403}, false, nil},
		{"GET", "/api/v1/applications", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/applications/a1", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/applications/b1", "", [4]int{200, 200, 200, 403}, false, nil},
		{"GET", "/api/v1/applications/missing", "", [4]int{404, 404, 404, 403}, false, nil},
		{"GET", "/api/v1/applications/a1/events", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/applications/a1/resource-tree", "", [4]int{200, 200, 200, 200}, false, nil},
		{"POST", "/api/v1/applications/a1/sync", `{"dryRun":true}`, [4]int{200, 403, 403, 200}, false, clearOperation},
		{"POST", "/api/v1/applications/b1/sync", `{"dryRun":true}`, [4]int{200, 403, 403, 403}, false, clearOperation},
		{"PUT", "/api/v1/applications/a1/spec", spec, [4]int{200, 403, 200, 403}, false, nil},
		{"POST", "/api/v1/applications", newApp, [4]int{200, 403, 403, 403}, false, deleteCreated},
		{"DELETE", "/api/v1/applications/a1/operation", "", [4]int{400, 403, 403, 400}, false, nil},
		{"DELETE", "/api/v1/applications/missing", "", [4]int{404, 403, 403, 403}, false, nil},
		{"GET", "/api/v1/projects", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/projects/team-a", "", [4]int{200, 200, 200, 200}, false, nil},
		{"POST", "/api/v1/projects", `{"project":{"metadata":{"name":"new-proj"}}}`, [4]int{200, 403, 403, 403}, false, deleteCreated},
		{"POST", "/api/v1/projects/team-a/roles/ci/token", `{}`, [4]int{200, 403, 403, 403}, false, nil},
		{"GET", "/api/v1/repositories", "", [4]int{200, 200, 200, 200}, false, nil},
		{"POST", "/api/v1/repositories", `{"repo":"https://charts.example.com","type":"helm","name":"x"}`, [4]int{200, 403, 403, 403}, false, deleteSecrets},
		{"GET", "/api/v1/repocreds", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/clusters", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/clusters/" + strings.ReplaceAll("https://kubernetes.default.svc", "/", "%2F"), "", [4]int{200, 200, 200, 200}, false, nil},
		{"POST", "/api/v1/clusters", `{"server":"https://other.example.com:6443"}`, [4]int{200, 403, 403, 403}, false, deleteSecrets},
		{"GET", "/api/v1/account", "", [4]int{200, 200, 200, 200}, false, nil},
		{"GET", "/api/v1/account/can-i/applications/sync/team-a/a1", "", [4]int{200, 200, 200, 200}, false, nil},
		{"POST", "/api/v1/account/image-updater/token", `{}`, [4]int{200, 403, 200, 403}, false, nil}, // an account may manage its own
	}
	for _, row := range rows {
		for i, c := range callers {
			want := 401
			switch {
			case i < 4:
				want = row.want[i]
			case row.public:
				want = row.want[0]
			}
			got := f.status(row.method, row.path, row.body, c.token)
			if got != want {
				t.Errorf("%s %s as %s: %d, want %d", row.method, row.path, c.name, got, want)
			}
			if row.after != nil {
				row.after()
			}
		}
	}

	// Lists hold only what the caller may see.
	var apps v1alpha1.ApplicationList
	if f.call("GET", "/api/v1/applications", "", tok["token"], &apps); len(apps.Items) != 1 || apps.Items[0].Name != "a1" {
		t.Errorf("a project token lists %d applications, want a1 only", len(apps.Items))
	}
	var answer map[string]string
	if f.call("GET", "/api/v1/account/can-i/applications/sync/team-a/a1", "", tok["token"], &answer); answer["value"] != "yes" {
		t.Errorf("can-i for the project token: %v", answer)
	}

	// Revoking the role's token ends it.
	if code := f.call("DELETE", "/api/v1/projects/team-a/roles/ci/token/0?id=pipeline", "", admin, nil); code != 200 {
		t.Fatalf("revoking the project token: %d", code)
	}
	if code := f.call("GET", "/api/v1/applications/a1", "", tok["token"], nil); code != 401 {
		t.Errorf("a revoked project token: %d, want 401", code)
	}
	// A project role's policy must stay in its project.
	bad := fmt.Sprintf(`{"project":{"metadata":{"name":"team-a"},"spec":{"roles":[{"name":"ci","policies":["p, proj:team-a:ci, applications, get, %s, allow"]}]}}}`, "default/*")
	if code := f.call("PUT", "/api/v1/projects/team-a", bad, admin, nil); code != 400 {
		t.Errorf("a role policy outside its project: %d, want 400", code)
	}
}

// status sends a request and returns the answer's status without reading
// the body, so streams can be called too.
func (f *fixture) status(method, path, body, token string) int {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := f.send(ctx, method, path, body, token)
	defer resp.Body.Close()
	return resp.StatusCode
}
