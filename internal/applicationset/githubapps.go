package applicationset

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/githubapp"
)

// countedGitHub is hc counting its GitHub API calls for the ApplicationSet,
// when Sources.CountGitHub asks for it.
func (g *generation) countedGitHub(hc *http.Client) *http.Client {
	if g.src.CountGitHub == nil {
		return hc
	}
	counted := *hc
	next := counted.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	counted.Transport = g.src.CountGitHub(next, g.appset.Namespace, g.appset.Name)
	return &counted
}

// githubAppClient is the HTTP client of a GitHub generator naming
// appSecretName: it acts as the GitHub App whose credentials that
// repository credential template (a repo-creds Secret of the control
// namespace, as in Argo CD) holds, on owner's installation unless the
// Secret names one. hc is the client the policy built (nil: default).
func (g *generation) githubAppClient(field, secretName, api, owner string, hc *http.Client) (*http.Client, error) {
	var s corev1.Secret
	if err := g.src.Reader.Get(g.ctx, client.ObjectKey{Namespace: g.src.Namespace, Name: secretName}, &s); err != nil {
		return nil, fmt.Errorf("%s.appSecretName: reading Secret %s/%s: %w", field, g.src.Namespace, secretName, err)
	}
	if s.Labels[v1alpha1.LabelSecretType] != v1alpha1.SecretTypeRepoCredentials {
		return nil, fmt.Errorf("%s.appSecretName: Secret %s/%s is not a repository credential template (label %s=%s)",
			field, g.src.Namespace, secretName, v1alpha1.LabelSecretType, v1alpha1.SecretTypeRepoCredentials)
	}
	app := githubapp.App{PrivateKey: s.Data["githubAppPrivateKey"], EnterpriseBaseURL: string(s.Data["githubAppEnterpriseBaseUrl"])}
	for key, into := range map[string]*int64{"githubAppID": &app.ID, "githubAppInstallationID": &app.InstallationID} {
		v := string(s.Data[key])
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s.appSecretName: %s of Secret %s/%s is not a number", field, key, g.src.Namespace, secretName)
		}
		*into = n
	}
	if err := appAPIAllowed(api, app.EnterpriseBaseURL); err != nil {
		return nil, fmt.Errorf("%s.appSecretName: Secret %s/%s: %w", field, g.src.Namespace, secretName, err)
	}
	c, err := githubapp.Client(g.ctx, app, api, owner, hc)
	if err != nil {
		return nil, fmt.Errorf("%s.appSecretName: Secret %s/%s: %w", field, g.src.Namespace, secretName, err)
	}
	return c, nil
}

// appAPIAllowed refuses a generator's api that is not the API the GitHub
// App's credentials are for (githubAppEnterpriseBaseUrl, else GitHub's):
// the App's signed token goes there, and a generator's author must not be
// able to send it elsewhere.
func appAPIAllowed(api, enterprise string) error {
	if api == "" {
		return nil
	}
	own := strings.TrimSuffix(cmp.Or(enterprise, "https://api.github.com"), "/")
	if strings.TrimSuffix(api, "/") != own {
		return fmt.Errorf("the GitHub App's credentials are for %s, not %s", own, api)
	}
	return nil
}
