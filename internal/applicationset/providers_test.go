package applicationset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// TestPullRequestGenerator: one preview Application per open, labelled
// pull request of a GitHub repository (through go-github against a local
// server speaking GitHub's API), with Argo CD's parameters; a request
// opened later gets its Application, a closed one loses it.
func TestPullRequestGenerator(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	gh := scmserver.GitHub(t, "gh-token", "org", "shop")
	gh.Add(scmserver.PullRequest{Head: "feature/Add_Login", Base: "main", Title: "Add login", HeadSHA: "0123456789abcdef", Author: "ana", Labels: []string{"preview"}})
	gh.Add(scmserver.PullRequest{Head: "chore", Base: "main", Title: "Chore", HeadSHA: "fedcba9876543210", Author: "bo"})
	if err := e.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "github-token", Namespace: e.ns},
		StringData: map[string]string{"token": "gh-token"}}); err != nil {
		t.Fatal(err)
	}
	requeue := int64(1)
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "previews", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		GoTemplate: true,
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			PullRequest: &v1alpha1.PullRequestGenerator{
				Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: "shop", API: gh.URL,
					TokenRef: &v1alpha1.SecretRef{SecretName: "github-token", Key: "token"}, Labels: []string{"preview"}},
				RequeueAfterSeconds: &requeue,
			}}}},
		Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "preview-{{.number}}",
				Annotations: map[string]string{"pr": "{{.branch_slug}} {{.head_short_sha}} {{.head_short_sha_7}} {{.author}} {{.title}} {{.target_branch}} {{index .labels 0}}"}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/org/shop.git", Path: "deploy", TargetRevision: "{{.head_sha}}"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "preview-{{.number}}"}},
		},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	apps := e.waitApps("preview-1")
	app := apps["preview-1"]
	if got, want := app.Annotations["pr"], "feature-add-login 01234567 0123456 ana Add login main preview"; got != want {
		t.Errorf("parameters %q, want %q", got, want)
	}
	if app.Spec.Source.TargetRevision != "0123456789abcdef" {
		t.Errorf("revision %s", app.Spec.Source.TargetRevision)
	}
	third := gh.Add(scmserver.PullRequest{Head: "search", Base: "main", Title: "Search", HeadSHA: "aaaaaaaaaaaaaaaa", Author: "cy", Labels: []string{"preview", "ui"}})
	e.waitApps("preview-1", fmt.Sprintf("preview-%d", third))
	gh.Close(1)
	e.waitApps(fmt.Sprintf("preview-%d", third))
}

// TestSCMProviderGenerator: one Application per repository of a GitHub
// organization that holds a deploy directory (through go-github against a
// local server speaking GitHub's API), with Argo CD's parameters; a
// repository added later gets its Application.
func TestSCMProviderGenerator(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	org := scmserver.GitHubOrg(t, "gh-token", "shop",
		scmserver.Repo{Name: "Web_Site", DefaultBranch: "main", Topics: []string{"team-a"}, Branches: map[string]string{"main": "0123456789ab"},
			Files: map[string][]string{"main": {"deploy/app.yaml"}}},
		scmserver.Repo{Name: "docs", DefaultBranch: "main", Branches: map[string]string{"main": "ffffffffffff"}, Files: map[string][]string{"main": {"README.md"}}},
	)
	if err := e.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "github-token", Namespace: e.ns},
		StringData: map[string]string{"token": "gh-token"}}); err != nil {
		t.Fatal(err)
	}
	requeue := int64(1)
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "repos", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			SCMProvider: &v1alpha1.SCMProviderGenerator{
				Github:              &v1alpha1.SCMProviderGeneratorGithub{Organization: "shop", API: org.URL, TokenRef: &v1alpha1.SecretRef{SecretName: "github-token", Key: "token"}},
				Filters:             []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy"}}},
				CloneProtocol:       "https",
				RequeueAfterSeconds: &requeue,
			}}}},
		Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{repository_id}}-{{branchNormalized}}",
				Annotations: map[string]string{"scm": "{{organization}} {{repository}} {{branch}} {{short_sha}} {{short_sha_7}} {{labels}}"}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "{{url}}", Path: "deploy", TargetRevision: "{{sha}}"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{repository_id}}"}},
		},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	app := e.waitApps("1-main")["1-main"]
	if got, want := app.Annotations["scm"], "shop Web_Site main 01234567 0123456 team-a"; got != want {
		t.Errorf("parameters %q, want %q", got, want)
	}
	if !strings.HasPrefix(app.Spec.Source.RepoURL, "https://") || !strings.HasSuffix(app.Spec.Source.RepoURL, "/shop/Web_Site.git") {
		t.Errorf("url %s", app.Spec.Source.RepoURL)
	}
	org.AddRepo(scmserver.Repo{Name: "api", DefaultBranch: "main", Branches: map[string]string{"main": "aaaaaaaaaaaa"}, Files: map[string][]string{"main": {"deploy/x.yaml"}}})
	e.waitApps("1-main", "3-main")
}
