package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/httpproxy"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// TestRepoAddWithClientCertsTokensAndProxies adds repositories that need
// a TLS client certificate, a bearer token or a proxy to reach, as
// Argo CD's repo add flags give them: the API tries each with what it is
// given before storing it, stores them in Argo CD's Secret keys, and
// never shows a key or token back; so with GitHub App and cloud
// credentials.
func TestRepoAddWithClientCertsTokensAndProxies(t *testing.T) {
	overBothAPIs(t, repoAddWithClientCertsTokensAndProxies)
}

func repoAddWithClientCertsTokensAndProxies(t *testing.T, flags ...string) {
	f := startCapstan(t, false)
	f.flags = flags
	f.login()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	mtls := gitserver.NewWith(t, gitserver.Options{TLS: true, ClientCerts: true})
	certs := mtls.NewRepo(t, "certs")
	certs.Commit(t, "c", map[string]string{"README": "certs"})
	base := []string{"repo", "add", certs.URL, "--username", mtls.Username, "--password", mtls.Password, "--insecure-skip-server-verification"}
	if code, _, errOut := f.run(base...); code != 1 || !strings.Contains(errOut, "unable to connect to repository") {
		t.Errorf("a repository that wants a client certificate, added without one: %d %s", code, errOut)
	}
	f.expect(0, append(base, "--tls-client-cert-path", write("client.crt", mtls.ClientCert), "--tls-client-cert-key-path", write("client.key", mtls.ClientKey))...)

	bearer := gitserver.NewWith(t, gitserver.Options{BearerToken: "bitbucket-token"})
	tokenRepo := bearer.NewRepo(t, "token")
	tokenRepo.Commit(t, "c", map[string]string{"README": "token"})
	if code, _, _ := f.run("repo", "add", tokenRepo.URL, "--bearer-token", "wrong"); code != 1 {
		t.Error("a wrong bearer token was accepted")
	}
	f.expect(0, "repo", "add", tokenRepo.URL, "--bearer-token", "bitbucket-token", "--force-http-basic-auth")

	proxy := httpproxy.New(t)
	plain := gitserver.New(t)
	proxied := plain.NewRepo(t, "proxied")
	proxied.Commit(t, "c", map[string]string{"README": "proxied"})
	f.expect(0, "repo", "add", proxied.URL, "--username", plain.Username, "--password", plain.Password, "--proxy", proxy.URL, "--no-proxy", "example.com")
	if proxy.Carried() == 0 {
		t.Error("the repository was not reached through its proxy")
	}

	stored := map[string]corev1.Secret{}
	list := &corev1.SecretList{}
	if err := f.c.List(context.Background(), list, client.InNamespace(f.ns), client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		stored[string(s.Data["url"])] = s
	}
	if s := stored[certs.URL]; string(s.Data["tlsClientCertData"]) != string(mtls.ClientCert) || string(s.Data["tlsClientCertKey"]) != string(mtls.ClientKey) {
		t.Errorf("client certificate Secret: %v", keys(s.Data))
	}
	if s := stored[tokenRepo.URL]; string(s.Data["bearerToken"]) != "bitbucket-token" || string(s.Data["forceHttpBasicAuth"]) != "true" {
		t.Errorf("bearer token Secret: %v", keys(s.Data))
	}
	if s := stored[proxied.URL]; string(s.Data["proxy"]) != proxy.URL || string(s.Data["noProxy"]) != "example.com" {
		t.Errorf("proxy Secret: %v", keys(s.Data))
	}
	out := f.expect(0, "repo", "list", "-o", "json")
	if strings.Contains(out, "bitbucket-token") || strings.Contains(out, "PRIVATE KEY") || !strings.Contains(out, proxy.URL) {
		t.Errorf("repo list shows a secret, or not the proxy:\n%s", out)
	}
	if code, _, errOut := f.run("repo", "add", "https://github.com/org/app.git", "--github-app-id", "1",
		"--github-app-private-key-path", write("app.pem", []byte("key"))); code != 1 || !strings.Contains(errOut, "go together") {
		t.Errorf("GitHub App credentials without an installation: %d %s", code, errOut)
	}

	// A GitHub App's installation: the repository is reached with the
	// installation's token, and the key is stored, never shown.
	app := scmserver.NewGitHubApp(t, 7, 70)
	github := scmserver.GitHubOrg(t, "unused", "shop")
	github.InstallApp(app)
	appGit := gitserver.New(t)
	appRepo := appGit.NewRepo(t, "web")
	appRepo.Commit(t, "web", map[string]string{"README": "web\n"})
	appGit.Username, appGit.Password = "x-access-token", "ghs_installation_70"
	f.expect(0, "repo", "add", appRepo.URL, "--github-app-id", "7", "--github-app-installation-id", "70",
		"--github-app-private-key-path", write("app.pem", app.PrivateKeyPEM), "--github-app-enterprise-base-url", github.URL)
	if out := f.expect(0, "repo", "list", "-o", "json"); strings.Contains(out, "PRIVATE KEY") || !strings.Contains(out, appRepo.URL) {
		t.Errorf("repo list after a GitHub App repository:\n%s", out)
	}
	repoAddWithCloudCredentials(t, f, write)
}

// repoAddWithCloudCredentials adds repositories reached with a Google
// service account key, an Azure service principal and the Azure workload
// identity, each tried with the token it buys before it is stored, and a
// credential template with a Google service account key; the key and the
// client secret are stored, never shown.
func repoAddWithCloudCredentials(t *testing.T, f *capstanFixture, write func(string, []byte) string) {
	ts := useTokenServer(t)
	google, azure := cloudGitServers(t, ts)
	spRepo, wiRepo := azure.NewRepo(t, "sp"), azure.NewRepo(t, "wi")
	for _, r := range []*gitserver.Repo{spRepo, wiRepo} {
		r.Commit(t, "c", map[string]string{"README": "cloud"})
	}
	keyFile := write("gcp.json", []byte(ts.GoogleKey))
	if code, _, errOut := f.run("repo", "add", "http://source.example.com/r", "--gcp-service-account-key-path", keyFile); code != 1 ||
		!strings.Contains(errOut, "only supported for HTTPS repositories") {
		t.Errorf("a Google key for a plain-HTTP URL: %d %s", code, errOut)
	}
	sp := []string{"--azure-service-principal-tenant-id", ts.Tenant, "--azure-service-principal-client-id", ts.ClientID,
		"--azure-active-directory-endpoint", ts.URL}
	if code, _, errOut := f.run(append([]string{"repo", "add", spRepo.URL, "--azure-service-principal-client-secret", "wrong"}, sp...)...); code != 1 ||
		!strings.Contains(errOut, "400 Bad Request") || strings.Contains(errOut, "wrong") {
		t.Errorf("a wrong client secret: %d %s", code, errOut)
	}
	f.expect(0, append([]string{"repo", "add", spRepo.URL, "--azure-service-principal-client-secret", ts.ClientSecret}, sp...)...)
	f.expect(0, "repo", "add", wiRepo.URL, "--use-azure-workload-identity")
	f.expect(0, "repocreds", "add", google.URL, "--gcp-service-account-key-path", keyFile, "--insecure-skip-server-verification")
	out := f.expect(0, "repo", "list", "-o", "json")
	for _, secret := range []string{ts.ClientSecret, "PRIVATE KEY"} {
		if strings.Contains(out, secret) {
			t.Errorf("repo list shows a secret (%.12s…):\n%s", secret, out)
		}
	}
	if !strings.Contains(out, `"useAzureWorkloadIdentity": true`) || !strings.Contains(out, `"azureServicePrincipalClientId": "`+ts.ClientID) {
		t.Errorf("repo list lacks the cloud credentials' public fields:\n%s", out)
	}
	if out := f.expect(0, "repocreds", "list", "-o", "json"); strings.Contains(out, "PRIVATE KEY") || !strings.Contains(out, google.URL) {
		t.Errorf("repocreds list shows the key, or not the template:\n%s", out)
	}
	list := &corev1.SecretList{}
	if err := f.c.List(context.Background(), list, client.InNamespace(f.ns), client.HasLabels{v1alpha1.LabelSecretType}); err != nil {
		t.Fatal(err)
	}
	byURL := map[string]map[string][]byte{}
	for _, s := range list.Items {
		byURL[string(s.Data["url"])] = s.Data
	}
	if d := byURL[spRepo.URL]; string(d["azureServicePrincipalClientSecret"]) != ts.ClientSecret || string(d["azureServicePrincipalTenantId"]) != ts.Tenant ||
		string(d["azureActiveDirectoryEndpoint"]) != ts.URL {
		t.Errorf("service principal Secret: %v", keys(d))
	}
	if d := byURL[wiRepo.URL]; string(d["useAzureWorkloadIdentity"]) != "true" {
		t.Errorf("workload identity Secret: %v", keys(d))
	}
	if d := byURL[google.URL]; string(d["gcpServiceAccountKey"]) != ts.GoogleKey {
		t.Errorf("Google credential template: %v", keys(d))
	}
}

func keys(data map[string][]byte) []string {
	var out []string
	for k := range data {
		out = append(out, k)
	}
	return out
}
