package applicationset_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
	"github.com/capstan-cd/capstan/internal/testing/trap"
)

// TestGitHubApp: the GitHub SCM provider and pull request generators
// naming appSecretName act as the GitHub App of that repository
// credential template — the installation looked up on the organization
// when the Secret names none — and a Secret that is not a credential
// template is refused.
func TestGitHubApp(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	app := scmserver.NewGitHubApp(t, 1234, 5678)
	org := scmserver.GitHubOrg(t, "unused-token", "shop",
		scmserver.Repo{Name: "web", DefaultBranch: "main", Branches: map[string]string{"main": "0123456789ab"}})
	org.InstallApp(app)
	prs := scmserver.GitHub(t, "unused-token", "shop", "web")
	prs.InstallApp(app)
	prs.Add(scmserver.PullRequest{Head: "feature", Base: "main", Title: "F", HeadSHA: "abcdef0123456789", Author: "ana"})

	creds := func(name string, labels map[string]string, installation bool, api string) *corev1.Secret {
		data := map[string]string{"githubAppID": strconv.FormatInt(app.ID, 10), "githubAppPrivateKey": string(app.PrivateKeyPEM), "url": "https://github.com/shop",
			"githubAppEnterpriseBaseUrl": api}
		if installation {
			data["githubAppInstallationID"] = strconv.FormatInt(app.InstallationID, 10)
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: labels}, StringData: data}
	}
	template := map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepoCredentials}
	for _, s := range []*corev1.Secret{creds("app-lookup", template, false, org.URL), creds("app-given", template, true, prs.URL), creds("not-creds", nil, true, org.URL)} {
		if err := e.client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	github := func(secret string) v1alpha1.SCMProviderGenerator {
		return v1alpha1.SCMProviderGenerator{Github: &v1alpha1.SCMProviderGeneratorGithub{Organization: "shop", API: org.URL, AppSecretName: secret}}
	}
	for name, secret := range map[string]string{"lookup": "app-lookup", "refused": "not-creds"} {
		if err := e.client.Create(ctx, scmAppSet(e.ns, name, github(secret))); err != nil {
			t.Fatal(err)
		}
	}
	pr := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "previews", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			PullRequest: &v1alpha1.PullRequestGenerator{RequeueAfterSeconds: ptr.To[int64](1),
				Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "shop", Repo: "web", API: prs.URL, AppSecretName: "app-given"}}}}},
		Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "preview-{{number}}"},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://github.com/shop/web.git", Path: "deploy"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "preview-{{number}}"}}},
	}}
	if err := e.client.Create(ctx, pr); err != nil {
		t.Fatal(err)
	}
	e.waitApps("lookup-web", "preview-1")
	e.errorOf("refused", "is not a repository credential template")

	// The App's signed token goes only to the API its credentials are for
	// (second tenant review): a generator naming another hears nothing.
	chosen := trap.Start(t)
	elsewhere := github("app-lookup")
	elsewhere.Github.API = chosen.URL
	if err := e.client.Create(ctx, scmAppSet(e.ns, "elsewhere", elsewhere)); err != nil {
		t.Fatal(err)
	}
	e.errorOf("elsewhere", "the GitHub App's credentials are for "+strings.TrimSuffix(org.URL, "/"))
	if heard := chosen.Heard(); len(heard) > 0 {
		t.Errorf("the API the generator named heard %d requests", len(heard))
	}
}
