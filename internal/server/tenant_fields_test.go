package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
	"github.com/capstan-cd/capstan/internal/testing/trap"
)

// The regression tests of the second tenant review's findings that the
// API server answers for, each named after what it prevents. Finding N1,
// N2, N4 and N7 are tested in the image updater and safetext, N3 in the
// hydrator, N8 in cloudauth.

// TestGenerateNeverSendsAnInstallSecret is finding N5: a preview
// (POST /api/v1/applicationsets/generate) whose generator names
// argocd-secret's session key, or any Secret not labelled as SCM
// credentials, as its token for an API of the caller's choosing is
// refused, and that API hears nothing: previews read tokens in strict
// mode, as Argo CD's do.
func TestGenerateNeverSendsAnInstallSecret(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	chosen := trap.Start(t)
	ctx := context.Background()
	for name, labels := range map[string]map[string]string{
		"team-token": nil,
		"team-repo":  {v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository},
	} {
		if err := tn.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tn.ns, Labels: labels},
			StringData: map[string]string{"token": "t", "url": "https://git.example/org/repo"}}); err != nil {
			t.Fatal(err)
		}
	}
	generate := func(secret, key string) string {
		return fmt.Sprintf(`{"applicationSet":{"metadata":{"name":"probe"},"spec":{"generators":[{"scmProvider":{"gitea":{"owner":"org","api":%q,"tokenRef":{"secretName":%q,"key":%q}}}}],`+
			`"template":{"metadata":{"name":"{{repository}}"},"spec":{"project":"team-a","destination":{"server":"https://kubernetes.default.svc","namespace":%q},"source":{"repoURL":"{{url}}","path":"x"}}}}}}`,
			chosen.URL, secret, key, tn.destA)
	}
	for _, tc := range []struct{ secret, key, says string }{
		{settings.ServerSecretName, "server.secretkey", "holds the install's own keys"},
		{"team-token", "token", "not a valid SCM creds secret"},
		{"team-repo", "token", "is a repository Secret"},
	} {
		var answer map[string]any
		if code := tn.call("POST", "/api/v1/applicationsets/generate", generate(tc.secret, tc.key), tn.admin, &answer); code != http.StatusBadRequest ||
			!strings.Contains(fmt.Sprint(answer["message"]), tc.says) {
			t.Errorf("generate with tokenRef %s/%s: %d %v, want 400 saying %q", tc.secret, tc.key, code, answer, tc.says)
		}
	}
	if heard := chosen.Heard(); len(heard) > 0 {
		t.Errorf("the API the caller chose heard %d requests: %+v", len(heard), heard)
	}
}

// TestApplicationSetCreateNeedsAServedNamespace: creating an
// ApplicationSet in a namespace the server does not serve is refused, as
// generating one already was.
func TestApplicationSetCreateNeedsAServedNamespace(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	body := fmt.Sprintf(`{"metadata":{"name":"elsewhere","namespace":%q},"spec":{"generators":[{"list":{"elements":[{"n":"a"}]}}],`+
		`"template":{"metadata":{"name":"{{n}}"},"spec":{"project":"team-a","destination":{"server":"https://kubernetes.default.svc","namespace":%q},"source":{"repoURL":%q,"path":"x"}}}}}`,
		tn.other, tn.destA, tn.remote.URL)
	var answer map[string]any
	if code := tn.call("POST", "/api/v1/applicationsets", body, tn.admin, &answer); code != http.StatusForbidden ||
		!strings.Contains(fmt.Sprint(answer["message"]), "is not permitted") {
		t.Errorf("create in namespace %s: %d %v, want 403", tn.other, code, answer)
	}
	var list v1alpha1.ApplicationSetList
	if err := tn.c.List(context.Background(), &list, client.InNamespace(tn.other)); err != nil || len(list.Items) != 0 {
		t.Errorf("ApplicationSets in %s: %v %v", tn.other, list.Items, err)
	}
}

// TestUpsertNeverReplacesAnotherSecret is finding N6: repository and
// cluster Secrets are named by a 128-bit hash, an upsert finds the Secret
// to replace by what it holds (URL and project, or server), never by
// name, and replacing it needs the right to update it. A Secret that has
// the new one's name but holds another repository is left alone.
func TestUpsertNeverReplacesAnotherSecret(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	ctx := context.Background()
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: tn.ns}, Data: map[string]string{
			"policy.default": "role:readonly",
			"policy.csv": "p, role:adder, repositories, create, *, allow\np, role:adder, clusters, create, *, allow\n" +
				"g, adder, role:adder\n"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: tn.ns}, Data: map[string]string{"accounts.adder": "apiKey"}},
	} {
		if err := testobj.Put(ctx, tn.c, obj); err != nil {
			t.Fatal(err)
		}
	}
	adder := tn.apiKey("adder")
	repoBody := func(url, project, password string) string {
		return fmt.Sprintf(`{"repo":%q,"type":"helm","project":%q,"username":"u","password":%q}`, url, project, password)
	}
	org := "https://charts.example/org"
	if code := tn.call("POST", "/api/v1/repositories", repoBody(org, "", "org-token"), tn.admin, nil); code != 200 {
		t.Fatalf("admin adds the org repository: %d", code)
	}
	stored := func(url string) []corev1.Secret {
		var list corev1.SecretList
		if err := tn.c.List(ctx, &list, client.InNamespace(tn.ns), client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}); err != nil {
			t.Fatal(err)
		}
		var out []corev1.Secret
		for _, s := range list.Items {
			if string(s.Data["url"]) == url {
				out = append(out, s)
			}
		}
		return out
	}
	orgSecret := stored(org)
	if len(orgSecret) != 1 || orgSecret[0].Name != "repo-"+settings.SecretNameHash(org, "") {
		t.Fatalf("the org repository's Secret: %v", orgSecret)
	}

	// A Secret holding the org repository under the name team-a's new
	// repository would get (as a colliding URL would have it).
	theirs := "https://charts.example/team-a"
	collided := orgSecret[0].DeepCopy()
	collided.ObjectMeta = metav1.ObjectMeta{Name: "repo-" + settings.SecretNameHash(theirs, "team-a"), Namespace: tn.ns, Labels: collided.Labels}
	if err := tn.c.Create(ctx, collided); err != nil {
		t.Fatal(err)
	}
	var answer map[string]any
	if code := tn.call("POST", "/api/v1/repositories?upsert=true", repoBody(theirs, "team-a", "team-token"), tn.admin, &answer); code != http.StatusConflict {
		t.Errorf("an upsert onto a Secret holding another repository: %d %v, want 409", code, answer)
	}
	if got := stored(org); len(got) != 2 || string(got[0].Data["password"]) != "org-token" || string(got[1].Data["password"]) != "org-token" {
		t.Errorf("the org repository's Secrets after the upsert: %v", got)
	}

	// The same repository again, changed: only with upsert, and only by a
	// caller who may update it.
	if code := tn.call("POST", "/api/v1/repositories?upsert=true", repoBody(org, "", "stolen"), adder, &answer); code != http.StatusForbidden {
		t.Errorf("an upsert without update permission: %d %v, want 403", code, answer)
	}
	if code := tn.call("POST", "/api/v1/repositories?upsert=true", repoBody(org, "", "rotated"), tn.admin, nil); code != 200 {
		t.Errorf("the administrator's upsert: %d", code)
	}
	if got := stored(org); len(got) != 2 || string(got[0].Data["password"])+string(got[1].Data["password"]) != "org-tokenrotated" && string(got[0].Data["password"])+string(got[1].Data["password"]) != "rotatedorg-token" {
		t.Errorf("after the administrator's upsert: %v", got)
	}

	// Clusters alike: an upsert of a cluster of another project needs
	// update on that cluster.
	cluster := `{"server":"https://prod.example:6443","name":"prod","config":{"bearerToken":"%s"},"project":"%s"}`
	if code := tn.call("POST", "/api/v1/clusters", fmt.Sprintf(cluster, "org", ""), tn.admin, nil); code != 200 {
		t.Fatalf("admin adds the cluster: %d", code)
	}
	if code := tn.call("POST", "/api/v1/clusters?upsert=true", fmt.Sprintf(cluster, "theirs", "team-a"), adder, &answer); code != http.StatusForbidden {
		t.Errorf("a cluster upsert without update permission: %d %v, want 403", code, answer)
	}
}

// TestLogoutRevokesEverywhere is finding N9: a session logged out on one
// API server replica is refused by the others too, for local and SSO
// sessions alike, and the logout leaves other sessions alone.
func TestLogoutRevokesEverywhere(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startCached(t)
	other := replica(t, f)
	mine, kept := f.adminToken(), f.adminToken()
	for _, srv := range []*fixture{f, other} {
		if code := srv.call("GET", "/api/v1/account", "", mine, nil); code != 200 {
			t.Fatalf("before logout on %s: %d", srv.base, code)
		}
	}
	logout(t, f, mine)
	for _, srv := range []*fixture{f, other} {
		eventually.Within(t, eventually.Options{Timeout: 10 * time.Second}, "the logged-out token refused on "+srv.base, func() string {
			var answer map[string]any
			if code := srv.call("GET", "/api/v1/account", "", mine, &answer); code != 401 || !strings.Contains(fmt.Sprint(answer["message"]), "token is revoked") {
				return fmt.Sprintf("%d %v", code, answer)
			}
			return ""
		})
	}
	if code := other.call("GET", "/api/v1/account", "", kept, nil); code != 200 {
		t.Errorf("another session after the logout: %d", code)
	}

	// An SSO session: the provider's ID token is revoked the same way.
	f.withDex()
	sso, _ := f.browserLogin()
	if code := other.call("GET", "/api/v1/applications", "", sso, nil); code != 200 {
		t.Fatalf("the SSO session before logout: %d", code)
	}
	logout(t, other, sso)
	eventually.Within(t, eventually.Options{Timeout: 10 * time.Second}, "the logged-out SSO token refused by the other replica", func() string {
		if code := f.call("GET", "/api/v1/applications", "", sso, nil); code != 401 {
			return fmt.Sprint(code)
		}
		return ""
	})
}

// logout logs token out as Argo CD's CLI does: POST /auth/logout with the
// token as the session cookie, no body and no Origin.
func logout(t *testing.T, f *fixture, token string) {
	t.Helper()
	c := apiclient.New(apiclient.Server{Server: f.base}, token)
	if err := c.Logout(context.Background()); err != nil {
		t.Fatalf("POST /auth/logout: %v", err)
	}
}

// replica runs a second API server on f's namespace, reading through an
// informer cache of its own, as another replica of argocd-server does.
func replica(t *testing.T, f *fixture) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, informers, err := kube.NewCachedClient(ctx, kubeCluster.Config, f.ns)
	if err != nil {
		t.Fatal(err)
	}
	renderer := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second})
	srv, err := New(ctx, Options{Client: c, Informers: informers, Config: kubeCluster.Config, Namespace: f.ns, Renderer: renderer, Insecure: true,
		AppSetPreview: applicationset.Previewer{Sources: applicationset.Sources{Git: renderer, Reader: c, Namespace: f.ns}}.Preview})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ctx, l) }()
	return &fixture{t: t, c: f.c, ns: f.ns, srv: srv, base: "http://" + l.Addr().String(), client: &http.Client{Timeout: 10 * time.Second}}
}
