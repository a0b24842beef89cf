package applicationset_test

import (
	"context"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// TestEveryProvider runs the SCM provider generator for Bitbucket Server,
// Bitbucket Cloud, Azure DevOps and AWS CodeCommit, and the pull request
// generator for Bitbucket Server, Bitbucket Cloud and Azure DevOps, each
// through its client library against a local server speaking the
// provider's API: one Application per repository holding a deploy
// directory, one per open pull request.
func TestEveryProvider(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "eu-west-1",
		"AWS_PROFILE": "", "AWS_CA_BUNDLE": "", "AWS_ROLE_ARN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": ""} {
		t.Setenv(k, v)
	}
	repos := func() []scmserver.Repo {
		return []scmserver.Repo{
			{Name: "web", DefaultBranch: "main", Branches: map[string]string{"main": "0123456789abcdef0123456789abcdef01234567"},
				Files: map[string][]string{"main": {"deploy/app.yaml"}}},
			{Name: "docs", DefaultBranch: "main", Branches: map[string]string{"main": "fedcba9876543210fedcba9876543210fedcba98"},
				Files: map[string][]string{"main": {"guide/index.md"}}},
		}
	}
	userPass := scmserver.BitbucketAuth{Username: "bot", Password: "bb-pass"}
	bbServer := scmserver.BitbucketServer(t, userPass, "PRJ", repos()...)
	bbCloud := scmserver.BitbucketCloud(t, userPass, "team", repos()...)
	azure := scmserver.AzureDevOps(t, "az-token", "org", "proj", repos()...)
	codeCommit := scmserver.AWSCodeCommit(t, "123456789012", "eu-west-1", repos()...)
	pr := scmserver.PullRequest{Head: "feature/x", Base: "main", Title: "X", HeadSHA: "0123456789abcdef", Author: "ana@example.com", Labels: []string{"preview"}}
	bbServer.AddPullRequest("web", pr)
	bbCloud.AddPullRequest("web", pr)
	azure.AddPullRequest("web", pr)

	e := start(t, func(o *applicationset.Options) {
		o.Endpoints = applicationset.Endpoints{BitbucketCloud: bbCloud.URL, AWS: codeCommit.URL}
	})
	ctx := context.Background()
	if err := e.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: e.ns},
		StringData: map[string]string{"password": "bb-pass", "token": "az-token"}}); err != nil {
		t.Fatal(err)
	}
	password := &v1alpha1.SecretRef{SecretName: "creds", Key: "password"}
	token := &v1alpha1.SecretRef{SecretName: "creds", Key: "token"}
	basic := &v1alpha1.BasicAuthBitbucketServer{Username: "bot", PasswordRef: password}
	deploy := []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy"}}}
	scmSets := map[string]v1alpha1.SCMProviderGenerator{
		"bbserver":   {BitbucketServer: &v1alpha1.SCMProviderGeneratorBitbucketServer{Project: "PRJ", API: bbServer.URL, BasicAuth: basic}},
		"bbcloud":    {Bitbucket: &v1alpha1.SCMProviderGeneratorBitbucket{Owner: "team", User: "bot", AppPasswordRef: password}},
		"azure":      {AzureDevOps: &v1alpha1.SCMProviderGeneratorAzureDevOps{Organization: "org", TeamProject: "proj", API: azure.URL, AccessTokenRef: token}},
		"codecommit": {AWSCodeCommit: &v1alpha1.SCMProviderGeneratorAWSCodeCommit{Region: "eu-west-1"}},
	}
	for name, gen := range scmSets {
		gen.Filters = deploy
		if err := e.client.Create(ctx, scmAppSet(e.ns, name, gen)); err != nil {
			t.Fatal(err)
		}
	}
	prSets := map[string]v1alpha1.PullRequestGenerator{
		"pr-bbserver": {BitbucketServer: &v1alpha1.PullRequestGeneratorBitbucketServer{Project: "PRJ", Repo: "web", API: bbServer.URL, BasicAuth: basic}},
		"pr-bbcloud":  {Bitbucket: &v1alpha1.PullRequestGeneratorBitbucket{Owner: "team", Repo: "web", API: bbCloud.URL, BasicAuth: basic}},
		"pr-azure":    {AzureDevOps: &v1alpha1.PullRequestGeneratorAzureDevOps{Organization: "org", Project: "proj", Repo: "web", API: azure.URL, TokenRef: token, Labels: []string{"preview"}}},
	}
	for name, gen := range prSets {
		gen.RequeueAfterSeconds = ptr.To[int64](1)
		as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{PullRequest: &gen}}},
			Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{
				Name: name + "-{{number}}", Annotations: map[string]string{"pr": "{{branch}} {{target_branch}} {{head_short_sha}} {{title}}"}},
				Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example/web.git", Path: "deploy", TargetRevision: "{{head_sha}}"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "pr-{{number}}"}}},
		}}
		if err := e.client.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	apps := e.waitApps("bbserver-web", "bbcloud-web", "azure-web", "codecommit-web", "pr-bbserver-1", "pr-bbcloud-1", "pr-azure-1")
	for _, name := range []string{"pr-bbserver-1", "pr-bbcloud-1", "pr-azure-1"} {
		if got, want := apps[name].Annotations["pr"], "feature/x main 01234567 X"; got != want {
			t.Errorf("%s: parameters %q, want %q", name, got, want)
		}
	}
}
