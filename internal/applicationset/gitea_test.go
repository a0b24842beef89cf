package applicationset_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/giteaserver"
)

// TestGiteaGenerators runs the SCM provider and pull request generators
// against a real Gitea: one Application per repository of the
// organization holding a deploy directory (a repository added later gets
// one), and a preview Application per open pull request once it carries
// the preview label, removed when the request is closed.
func TestGiteaGenerators(t *testing.T) {
	e := start(t, nil)
	gt := giteaserver.Start(t)
	ctx := context.Background()
	gt.Org(t, "shop")
	web := gt.Repo(t, "shop", "web", map[string]string{"deploy/app.yaml": "kind: ConfigMap\n"})
	gt.Repo(t, "shop", "docs", map[string]string{"guide/index.md": "# docs\n"})
	preview := gt.Label(t, "shop", "web", "preview")
	if err := e.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gitea-token", Namespace: e.ns},
		StringData: map[string]string{"token": gt.Token}}); err != nil {
		t.Fatal(err)
	}
	token := &v1alpha1.SecretRef{SecretName: "gitea-token", Key: "token"}
	spec := v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{Path: "deploy"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop"}}

	repos := spec.DeepCopy()
	repos.Source.RepoURL, repos.Source.TargetRevision = "{{url}}", "{{sha}}"
	for _, as := range []*v1alpha1.ApplicationSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "repos", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				SCMProvider: &v1alpha1.SCMProviderGenerator{
					Gitea:         &v1alpha1.SCMProviderGeneratorGitea{Owner: "shop", API: gt.URL, TokenRef: token},
					Filters:       []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy"}}},
					CloneProtocol: "https", RequeueAfterSeconds: ptr.To[int64](1),
				}}}},
			Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{
				Name: "repo-{{repository}}-{{branchNormalized}}", Annotations: map[string]string{"scm": "{{organization}} {{repository_id}} {{labels}}"}},
				Spec: *repos},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "previews", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
			GoTemplate: true,
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				PullRequest: &v1alpha1.PullRequestGenerator{
					Gitea:               &v1alpha1.PullRequestGeneratorGitea{Owner: "shop", Repo: "web", API: gt.URL, TokenRef: token, Labels: []string{"preview"}},
					RequeueAfterSeconds: ptr.To[int64](1),
				}}}},
			Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{
				Name: "preview-{{.number}}", Annotations: map[string]string{"pr": "{{.branch_slug}} {{.target_branch}} {{.author}} {{.title}} {{len .head_sha}}"}},
				Spec: *spec.DeepCopy()},
		}},
	} {
		if as.Name == "previews" {
			as.Spec.Template.Spec.Source.RepoURL, as.Spec.Template.Spec.Source.TargetRevision = web.CloneURL, "{{.head_sha}}"
		}
		if err := e.client.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	app := e.waitApps("repo-web-main")["repo-web-main"]
	if got, want := app.Annotations["scm"], fmt.Sprintf("shop %d preview", web.ID); got != want {
		t.Errorf("SCM parameters %q, want %q", got, want)
	}
	if app.Spec.Source.RepoURL != web.CloneURL || len(app.Spec.Source.TargetRevision) != 40 {
		t.Errorf("source %s@%s, want %s at a commit", app.Spec.Source.RepoURL, app.Spec.Source.TargetRevision, web.CloneURL)
	}
	gt.Repo(t, "shop", "api", map[string]string{"deploy/app.yaml": "kind: ConfigMap\n"})
	e.waitApps("repo-web-main", "repo-api-main")

	// A pull request: no Application until it is labelled preview.
	gt.File(t, "shop", "web", "feature/Login_Page", "main", "deploy/login.yaml", "kind: ConfigMap\n")
	n := gt.PullRequest(t, "shop", "web", "feature/Login_Page", "main", "Login page")
	gt.AddLabels(t, "shop", "web", n, preview)
	name := fmt.Sprintf("preview-%d", n)
	app = e.waitApps("repo-web-main", "repo-api-main", name)[name]
	if got, want := app.Annotations["pr"], "feature-login-page main capstan Login page 40"; got != want {
		t.Errorf("pull request parameters %q, want %q", got, want)
	}
	gt.Close(t, "shop", "web", n)
	e.waitApps("repo-web-main", "repo-api-main")
}
