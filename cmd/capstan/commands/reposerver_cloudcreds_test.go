package commands

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cloudauth"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/redisserver"
	"github.com/capstan-cd/capstan/internal/testing/tokenserver"
)

// TestRepoServerCloudCredentials: `capstan repo-server` reaches Git
// repositories with the tokens their credentials buy from the (local)
// identity services: a credential template's Google service account key,
// a repository Secret's Azure service principal, and the pod's Azure
// workload identity a Secret asks for. Each Git server serves only
// requests carrying a token the service issued for its scope.
func TestRepoServerCloudCredentials(t *testing.T) {
	localcluster.Need(t)
	ts := useTokenServer(t)

	google, azure := cloudGitServers(t, ts)
	cs := kubernetes.NewForConfigOrDie(kubeCluster.Config)
	ns := kubeCluster.NewNamespace(t)
	repos := map[string]map[string]string{
		"google":            {"gcpServiceAccountKey": ts.GoogleKey, "insecure": "true"},
		"service-principal": {"azureServicePrincipalTenantId": ts.Tenant, "azureServicePrincipalClientId": ts.ClientID, "azureServicePrincipalClientSecret": ts.ClientSecret, "azureActiveDirectoryEndpoint": ts.URL},
		"workload-identity": {"useAzureWorkloadIdentity": "true"},
	}
	urls := map[string]string{}
	for name, data := range repos {
		srv := azure
		if name == "google" {
			srv = google
		}
		remote := srv.NewRepo(t, name)
		remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"})
		urls[name] = remote.URL
		data["url"] = remote.URL
		kind := v1alpha1.SecretTypeRepository
		if name == "google" { // a credential template covering the server's repositories
			kind, data["url"] = v1alpha1.SecretTypeRepoCredentials, srv.URL
		}
		if _, err := cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelSecretType: kind}},
			StringData: data,
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	client, _ := startRepoServer(t, ns, redisserver.Start(t))
	for name, url := range urls {
		if resp := renderThrough(t, client, url); len(resp.Objects) != 1 || resp.Objects[0].GetName() != name {
			t.Errorf("%s: objects = %v", name, resp.Objects)
		}
	}
	if n := ts.Requests("entra"); n != 2 {
		t.Errorf("%d Entra ID token requests, want 2 (one per identity, then reused)", n)
	}

	// A Helm repository in an Azure Container Registry gets the registry's
	// refresh token, for the user Azure names.
	helm := &settings.Repository{URL: ts.Host + "/charts", Type: "helm", CloudCreds: settings.CloudCreds{UseAzureWorkloadIdentity: true}}
	creds, err := helm.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if creds.Username != cloudauth.AzureEmptyUser || ts.Scope(creds.Password) != "registry:"+ts.Host {
		t.Errorf("Helm creds: user %q and a token for %q, want the registry's refresh token", creds.Username, ts.Scope(creds.Password))
	}
}

// useTokenServer starts a local identity service, makes cloudauth trust
// it until the test ends, and gives the process the environment Azure's
// workload identity webhook gives a pod, for the service's principal.
func useTokenServer(t *testing.T) *tokenserver.Server {
	t.Helper()
	ts := tokenserver.New(t)
	old := cloudauth.Default
	// The local stand-ins for Azure DevOps and the registry are on
	// loopback, which the identity's tokens may reach only when listed.
	cloudauth.Default = cloudauth.New(cloudauth.Options{HTTPClient: ts.Client(), AzureIdentityHosts: []string{"127.0.0.1"}})
	t.Cleanup(func() { cloudauth.Default = old })
	ts.UseWorkloadIdentity(t)
	return ts
}

// cloudGitServers are Git servers that serve only requests carrying a
// token ts issued: Google's (over HTTPS, with basic auth as the service
// account) and Azure DevOps' (a Bearer token).
func cloudGitServers(t *testing.T, ts *tokenserver.Server) (google, azure *gitserver.Server) {
	google = gitserver.NewWith(t, gitserver.Options{TLS: true, Authorize: func(r *http.Request) bool {
		user, token, ok := r.BasicAuth()
		return ok && user == ts.GoogleEmail && ts.Scope(token) == cloudauth.GoogleScope
	}})
	azure = gitserver.NewWith(t, gitserver.Options{Authorize: func(r *http.Request) bool {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return ok && ts.Scope(token) == cloudauth.AzureDevOpsScope
	}})
	return google, azure
}
