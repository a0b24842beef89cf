package settings

import (
	"context"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &cluster))
}

func setup(t *testing.T) (client.Client, string) {
	localcluster.Need(t)
	t.Helper()
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c, cluster.NewNamespace(t)
}

func secret(ns, name, kind string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{v1alpha1.LabelSecretType: kind}},
		StringData: data,
	}
}

func TestRepoCredentialsMatching(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	for _, s := range []*corev1.Secret{
		secret(ns, "exact", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://git.example.com/team/app.git", "username": "exact-user", "password": "exact-pass"}),
		secret(ns, "no-creds", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://git.example.com/team/public", "insecure": "true"}),
		secret(ns, "org", v1alpha1.SecretTypeRepoCredentials, map[string]string{"url": "https://git.example.com/", "username": "org-user", "password": "org-pass"}),
		secret(ns, "team", v1alpha1.SecretTypeRepoCredentials, map[string]string{"url": "https://git.example.com/team", "username": "team-user", "password": "team-pass"}),
		secret(ns, "ssh", v1alpha1.SecretTypeRepository, map[string]string{"url": "git@ssh.example.com:org/repo.git", "sshPrivateKey": "-----BEGIN KEY-----\n"}),
		secret(ns, "cluster", v1alpha1.SecretTypeCluster, map[string]string{"server": "https://k8s.example.com", "name": "c"}),
	} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: TLSCertsConfigMap, Namespace: ns}, Data: map[string]string{"git.example.com": "-----BEGIN CERTIFICATE-----\n"}},
		{ObjectMeta: metav1.ObjectMeta{Name: SSHKnownHostsConfigMap, Namespace: ns}, Data: map[string]string{"ssh_known_hosts": "ssh.example.com ssh-ed25519 AAAA\n"}},
	} {
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	rc := &RepoCredentials{Reader: c, Namespace: ns}
	for _, tc := range []struct {
		url      string
		user     string
		insecure bool
	}{
		{"https://git.example.com/team/app.git", "exact-user", false},
		{"https://GIT.example.com/team/app", "exact-user", false},      // normalised
		{"https://git.example.com/team/other.git", "team-user", false}, // longest template prefix
		{"https://git.example.com/elsewhere/x.git", "org-user", false},
		{"https://git.example.com/team/public.git", "team-user", true}, // repository options, template credentials
		{"https://other.example.com/x.git", "", false},
	} {
		creds, err := rc.ForRepo(ctx, tc.url, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if creds.Username != tc.user || creds.Insecure != tc.insecure {
			t.Errorf("%s: user %q insecure %v, want %q %v", tc.url, creds.Username, creds.Insecure, tc.user, tc.insecure)
		}
		wantCA := strings.Contains(tc.url, "git.example.com") || strings.Contains(tc.url, "GIT.example.com")
		if (len(creds.CAData) > 0) != wantCA {
			t.Errorf("%s: CA data %q", tc.url, creds.CAData)
		}
	}
	creds, err := rc.ForRepo(ctx, "git@ssh.example.com:org/repo.git", "")
	if err != nil {
		t.Fatal(err)
	}
	if creds.SSHPrivateKey == "" || !strings.Contains(creds.KnownHosts, "ssh.example.com") {
		t.Errorf("ssh creds = %+v", creds)
	}
}

func TestBadRepositorySecretNamesTheSecret(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	if err := c.Create(ctx, secret(ns, "broken", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://x/y", "insecure": "maybe"})); err != nil {
		t.Fatal(err)
	}
	_, err := (&RepoCredentials{Reader: c, Namespace: ns}).ForRepo(ctx, "https://x/y", "")
	if err == nil || !strings.Contains(err.Error(), "Secret/"+ns+"/broken") || !strings.Contains(err.Error(), "insecure") {
		t.Errorf("got %v, want an error naming the Secret and the key", err)
	}
}

// TestRepositoryCreds: a repository Secret's client certificate, bearer
// token and proxy reach git; GitHub App credentials are read, and shown
// without their key.
func TestRepositoryCreds(t *testing.T) {
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "repo-1", Namespace: "argocd",
			Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	r, err := repositoryFromSecret(secret(map[string]string{"url": "https://git.example.com/a.git", "tlsClientCertData": "CERT", "tlsClientCertKey": "KEY",
		"bearerToken": "tok", "proxy": "http://proxy:3128", "noProxy": "internal", "forceHttpBasicAuth": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	creds := r.Creds()
	if creds.TLSClientCert != "CERT" || creds.TLSClientKey != "KEY" || creds.BearerToken != "tok" || creds.Proxy != "http://proxy:3128" ||
		creds.NoProxy != "internal" || !r.ForceHTTPBasicAuth {
		t.Errorf("creds %+v", creds)
	}
	if shown := r.Redacted(); shown.TLSClientCertKey != "" || shown.BearerToken != "" || shown.TLSClientCertData != "CERT" {
		t.Errorf("redacted: %+v", shown)
	}
	app, err := repositoryFromSecret(secret(map[string]string{"url": "https://github.com/org/a.git", "githubAppID": "1", "githubAppPrivateKey": "KEY",
		"githubAppEnterpriseBaseUrl": "https://ghe.example.com/api/v3"}))
	if err != nil {
		t.Fatal(err)
	}
	if app.GitHubApp.ID != 1 || app.GitHubApp.PrivateKey != "KEY" || app.GitHubApp.EnterpriseBaseURL != "https://ghe.example.com/api/v3" || !app.HasCredentials() {
		t.Errorf("GitHub App credentials read as %+v", app.GitHubApp)
	}
	if shown := app.Redacted(); shown.GitHubApp.PrivateKey != "" || shown.GitHubApp.ID != 1 {
		t.Errorf("redacted: %+v", shown.GitHubApp)
	}
	if _, err := app.Resolve(context.Background()); err == nil || !strings.Contains(err.Error(), "installation ID") {
		t.Errorf("GitHub App credentials without an installation: %v", err)
	}
	if _, err := repositoryFromSecret(secret(map[string]string{"url": "https://github.com/org/a.git", "githubAppID": "one"})); err == nil {
		t.Error("a GitHub App ID that is not a number is read")
	}

	// Argo CD 3.3's connection keys: read, passed on, written back alike.
	opts := map[string]string{"url": "oci://registry.example.com/org/manifests", "type": "oci", "insecureOCIForceHttp": "true",
		"depth": "5", "webhookManifestCacheWarmDisabled": "true", "enableLfs": "true"}
	r, err = repositoryFromSecret(secret(opts))
	if err != nil {
		t.Fatal(err)
	}
	if creds := r.Creds(); !creds.PlainHTTP || creds.Depth != 5 || !creds.LFS || !r.WebhookManifestCacheWarmDisabled {
		t.Errorf("connection keys read as %+v, creds %+v", r, creds)
	}
	for k, v := range opts {
		if got := string(r.Secret("argocd").Data[k]); got != v {
			t.Errorf("written back, %s is %q, want %q", k, got, v)
		}
	}
	for _, bad := range []string{"-1", "deep"} {
		if _, err := repositoryFromSecret(secret(map[string]string{"url": "https://x/y", "depth": bad})); err == nil || !strings.Contains(err.Error(), "depth") {
			t.Errorf("depth %q: %v", bad, err)
		}
	}
}

// TestProjectSecretCannotDropTLS: a project's repository Secret that asks
// for plain HTTP to a registry never gets an unscoped template's
// credentials, which would then travel unencrypted.
func TestProjectSecretCannotDropTLS(t *testing.T) {
	repo := &Repository{URL: "oci://registry.example.com/team/app", Project: "team", InsecureOCIForceHTTP: true}
	template := &Repository{URL: "oci://registry.example.com", Template: true, Username: "u", Password: "p"}
	if !loosens(repo, template) {
		t.Error("a project's Secret turning TLS off takes the template's credentials")
	}
	template.InsecureOCIForceHTTP = true
	if loosens(repo, template) {
		t.Error("a template that is itself plain HTTP is refused")
	}
}

// TestRepoWriteCredentials: push credentials come from repository-write
// Secrets and repo-write-creds templates only, and those never serve reads.
func TestRepoWriteCredentials(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	for _, s := range []*corev1.Secret{
		secret(ns, "read", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://git.example.com/team/app.git", "username": "reader", "password": "r"}),
		secret(ns, "write", v1alpha1.SecretTypeRepositoryWrite, map[string]string{"url": "https://git.example.com/team/app.git", "username": "writer", "password": "w"}),
		secret(ns, "write-org", v1alpha1.SecretTypeRepoWriteCredentials, map[string]string{"url": "https://git.example.com/", "username": "org-writer", "password": "o"}),
	} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		write bool
		url   string
		user  string
	}{
		{false, "https://git.example.com/team/app.git", "reader"},
		{true, "https://git.example.com/team/app.git", "writer"},
		{true, "https://git.example.com/other/repo", "org-writer"},
		{false, "https://git.example.com/other/repo", ""},
	} {
		creds, err := (&RepoCredentials{Reader: c, Namespace: ns, Write: tc.write}).ForRepo(ctx, tc.url, "")
		if err != nil || creds.Username != tc.user {
			t.Errorf("write=%v %s: user %q, %v; want %q", tc.write, tc.url, creds.Username, err, tc.user)
		}
	}
}

// TestRepoCredentialsFollowTheProject is finding 8 of the tenant review:
// one project's scoped credentials never serve another project; a
// project's own come before unscoped ones; a caller of no project gets
// only unscoped ones; and a template never covers another host.
func TestRepoCredentialsFollowTheProject(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	scoped := func(name, kind, url, user, project string) *corev1.Secret {
		data := map[string]string{"url": url, "username": user, "password": user + "-pass"}
		if project != "" {
			data["project"] = project
		}
		return secret(ns, name, kind, data)
	}
	for _, s := range []*corev1.Secret{
		scoped("a-repo", v1alpha1.SecretTypeRepository, "https://git.example.com/shared/app.git", "a-user", "a"),
		scoped("b-repo", v1alpha1.SecretTypeRepository, "https://git.example.com/shared/app.git", "b-user", "b"),
		scoped("any-repo", v1alpha1.SecretTypeRepository, "https://git.example.com/shared/app.git", "any-user", ""),
		scoped("a-only", v1alpha1.SecretTypeRepository, "https://git.example.com/a/private.git", "a-private", "a"),
		scoped("a-tmpl", v1alpha1.SecretTypeRepoCredentials, "https://tmpl.example.com/org", "a-tmpl", "a"),
		scoped("any-tmpl", v1alpha1.SecretTypeRepoCredentials, "https://tmpl.example.com/org/team", "any-tmpl", ""),
		scoped("host-tmpl", v1alpha1.SecretTypeRepoCredentials, "https://host.example.com", "host-tmpl", ""),
		// A project's Secret without credentials of its own, pointing the
		// unscoped template's credentials at its own proxy: it gets none.
		secret(ns, "a-proxied", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://tmpl.example.com/org/team/proxied.git", "project": "b",
			"proxy": "http://proxy.attacker.example"}),
		secret(ns, "a-insecure", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://tmpl.example.com/org/team/insecure.git", "project": "c",
			"insecure": "true"}),
	} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	rc := &RepoCredentials{Reader: c, Namespace: ns}
	for _, tc := range []struct{ url, project, user string }{
		{"https://git.example.com/shared/app.git", "a", "a-user"},
		{"https://git.example.com/shared/app.git", "b", "b-user"},
		{"https://git.example.com/shared/app.git", "c", "any-user"},
		{"https://git.example.com/shared/app.git", "", "any-user"},
		{"https://git.example.com/a/private.git", "a", "a-private"},
		{"https://git.example.com/a/private.git", "b", ""},
		{"https://git.example.com/a/private.git", "", ""},
		{"https://tmpl.example.com/org/team/x.git", "a", "a-tmpl"}, // the project's own template, though shorter
		{"https://tmpl.example.com/org/team/x.git", "b", "any-tmpl"},
		{"https://tmpl.example.com/org/other.git", "b", ""},
		{"https://host.example.com/x.git", "", "host-tmpl"},
		{"https://tmpl.example.com/org/team/proxied.git", "b", ""},
		{"https://tmpl.example.com/org/team/insecure.git", "c", ""},
		{"https://tmpl.example.com/org/team/proxied.git", "a", "a-tmpl"}, // another project's Secret: a's own template
		{"https://host.example.com.elsewhere.io/x.git", "", ""},          // another host
	} {
		creds, err := rc.ForRepo(ctx, tc.url, tc.project)
		if err != nil {
			t.Fatalf("%s for %q: %v", tc.url, tc.project, err)
		}
		if creds.Username != tc.user {
			t.Errorf("%s for project %q: user %q, want %q", tc.url, tc.project, creds.Username, tc.user)
		}
	}
}

// TestURLByName: a Helm dependency's "@name" finds the repository Secret of
// that name, the project's own before an unscoped one, never another
// project's.
func TestURLByName(t *testing.T) {
	c, ns := setup(t)
	ctx := context.Background()
	for _, s := range []*corev1.Secret{
		secret(ns, "stable", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://charts.example.com/stable", "type": "helm", "name": "stable"}),
		secret(ns, "team-stable", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://charts.example.com/team", "type": "helm", "name": "stable", "project": "team"}),
		secret(ns, "other", v1alpha1.SecretTypeRepository, map[string]string{"url": "https://charts.example.com/other", "type": "helm", "name": "private", "project": "other"}),
	} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	creds := &RepoCredentials{Reader: c, Namespace: ns}
	for _, tc := range []struct{ name, project, want string }{
		{"stable", "", "https://charts.example.com/stable"},
		{"stable", "team", "https://charts.example.com/team"},
		{"private", "team", ""},
		{"missing", "", ""},
	} {
		got, err := creds.URLByName(ctx, tc.name, tc.project)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("@%s for project %q: %q, %v; want %q", tc.name, tc.project, got, err, tc.want)
		}
	}
}
