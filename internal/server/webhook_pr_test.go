package server

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// marked returns the ApplicationSets carrying the refresh mark and
// removes it, so the next event starts clean.
func (f *fixture) marked() string {
	f.t.Helper()
	ctx := context.Background()
	var list v1alpha1.ApplicationSetList
	if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		as := &list.Items[i]
		if as.Annotations[v1alpha1.AnnotationApplicationSetRefresh] != "true" {
			continue
		}
		out = append(out, as.Name)
		patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.AnnotationApplicationSetRefresh + `":null}}}`)
		if err := f.c.Patch(ctx, as, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			f.t.Fatal(err)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// TestWebhookPullRequestEvents: a pull request event of each provider
// marks the ApplicationSets whose pull request generators (at any depth)
// list its repository, and those with a plugin generator; an action that
// changes nothing listed, another repository, or a wrong secret marks
// none. An Azure DevOps push reaches git generators.
func TestWebhookPullRequestEvents(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	pr := func(g v1alpha1.PullRequestGenerator) v1alpha1.ApplicationSetGenerator {
		return v1alpha1.ApplicationSetGenerator{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{PullRequest: &g}}
	}
	sets := map[string]v1alpha1.ApplicationSetGenerator{
		"github":     pr(v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "Org", Repo: "app"}}),
		"github-ghe": pr(v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: "app", API: "https://ghe.example/api/v3"}}),
		"gitlab":     pr(v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{Project: "group/app"}}),
		"gitea":      pr(v1alpha1.PullRequestGenerator{Gitea: &v1alpha1.PullRequestGeneratorGitea{Owner: "org", Repo: "app", API: "https://gitea.example"}}),
		"bbserver":   pr(v1alpha1.PullRequestGenerator{BitbucketServer: &v1alpha1.PullRequestGeneratorBitbucketServer{Project: "PRJ", Repo: "app", API: "https://bb.example/rest"}}),
		"bitbucket":  pr(v1alpha1.PullRequestGenerator{Bitbucket: &v1alpha1.PullRequestGeneratorBitbucket{Owner: "team", Repo: "app"}}),
		"azure":      pr(v1alpha1.PullRequestGenerator{AzureDevOps: &v1alpha1.PullRequestGeneratorAzureDevOps{Organization: "o", Project: "proj", Repo: "app"}}),
		"plugin": {ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			Plugin: &v1alpha1.PluginGenerator{ConfigMapRef: v1alpha1.PluginConfigMapRef{Name: "p"}}}},
		"azure-git": {ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			Git: &v1alpha1.GitGenerator{RepoURL: "https://dev.azure.com/o/proj/_git/app", Revision: "HEAD"}}},
		"nested": {Matrix: &v1alpha1.MatrixGenerator{Generators: []v1alpha1.ApplicationSetNestedGenerator{
			{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{List: &v1alpha1.ListGenerator{}}},
			{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				PullRequest: &v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{Project: "42"}}}},
		}}},
	}
	for name, gen := range sets {
		as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSetSpec{Generators: []v1alpha1.ApplicationSetGenerator{gen}}}
		if err := f.c.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	f.setSecret("webhook.azuredevops.username", "hook")
	f.setSecret("webhook.azuredevops.password", "s3cret")
	azureAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte("hook:s3cret"))
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		want    string
		code    int
	}{
		{"GitHub opened", map[string]string{"X-GitHub-Event": "pull_request"},
			`{"action":"opened","repository":{"name":"App","html_url":"https://github.com/org/App","owner":{"login":"org"}}}`, "github,plugin", 200},
		{"GitHub Enterprise labeled", map[string]string{"X-GitHub-Event": "pull_request"},
			`{"action":"labeled","repository":{"name":"app","html_url":"https://ghe.example/org/app","owner":{"login":"org"}}}`, "github-ghe,plugin", 200},
		{"GitHub assigned changes nothing listed", map[string]string{"X-GitHub-Event": "pull_request"},
			`{"action":"assigned","repository":{"name":"app","html_url":"https://github.com/org/app","owner":{"login":"org"}}}`, "", 200},
		{"GitLab merge request by path", map[string]string{"X-Gitlab-Event": "Merge Request Hook"},
			`{"object_attributes":{"action":"open","target_project_id":7},"project":{"web_url":"https://gitlab.com/group/app","path_with_namespace":"group/app"}}`, "gitlab,plugin", 200},
		{"GitLab merge request by ID, nested", map[string]string{"X-Gitlab-Event": "Merge Request Hook"},
			`{"object_attributes":{"action":"merge","target_project_id":42},"project":{"web_url":"https://gitlab.com/other/x","path_with_namespace":"other/x"}}`, "nested,plugin", 200},
		{"Gitea label", map[string]string{"X-Gitea-Event": "pull_request_label"},
			`{"action":"label_updated","repository":{"name":"app","html_url":"https://gitea.example/org/app","owner":{"username":"org"}}}`, "gitea,plugin", 200},
		{"Gitea on another host", map[string]string{"X-Gitea-Event": "pull_request"},
			`{"action":"opened","repository":{"name":"app","html_url":"https://elsewhere.example/org/app","owner":{"username":"org"}}}`, "plugin", 200},
		{"Bitbucket Server declined", map[string]string{"X-Event-Key": "pr:declined"},
			`{"pullRequest":{"toRef":{"repository":{"slug":"app","project":{"key":"PRJ"}}}}}`, "bbserver,plugin", 200},
		{"Bitbucket Cloud created", map[string]string{"X-Event-Key": "pullrequest:created"},
			`{"repository":{"full_name":"team/app"}}`, "bitbucket,plugin", 200},
		{"Azure DevOps updated", map[string]string{"X-Vss-Activityid": "1", "Authorization": azureAuth},
			`{"eventType":"git.pullrequest.updated","resource":{"repository":{"name":"app","project":{"name":"proj"}}}}`, "azure,plugin", 200},
		{"Azure DevOps push", map[string]string{"X-Vss-Activityid": "1", "Authorization": azureAuth},
			`{"eventType":"git.push","resource":{"refUpdates":[{"name":"refs/heads/main"}],"repository":{"remoteUrl":"https://dev.azure.com/o/proj/_git/app","defaultBranch":"refs/heads/main"}}}`, "azure-git,plugin", 200},
		{"Azure DevOps with a wrong password", map[string]string{"X-Vss-Activityid": "1", "Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("hook:guess"))},
			`{"eventType":"git.pullrequest.updated","resource":{"repository":{"name":"app","project":{"name":"proj"}}}}`, "", 400},
	}
	for _, tt := range tests {
		if code := f.post(tt.body, tt.headers); code != tt.code {
			t.Errorf("%s: status %d, want %d", tt.name, code, tt.code)
		}
		if got := f.marked(); got != tt.want {
			t.Errorf("%s: marked %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestWebhookApplicationSetsElsewhere: with Applications enabled in other
// namespaces, a push marks the ApplicationSets of those namespaces whose
// git generators read it, and none of a namespace not enabled.
func TestWebhookApplicationSetsElsewhere(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	team, stranger := kubeCluster.NewNamespace(t), kubeCluster.NewNamespace(t)
	f := serve(t, Options{Insecure: true, ApplicationNamespaces: []string{team}}, true)
	git := &v1alpha1.GitGenerator{RepoURL: "https://github.com/org/app.git", Revision: "main", Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "*"}}}
	for _, ns := range []string{team, stranger} {
		as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "reads", Namespace: ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{Git: git}}}}}
		if err := f.c.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	if code := f.post(githubPush, map[string]string{"X-GitHub-Event": "push"}); code != 200 {
		t.Fatalf("a GitHub push: %d", code)
	}
	for ns, want := range map[string]string{team: "true", stranger: ""} {
		as := &v1alpha1.ApplicationSet{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reads"}, as); err != nil {
			t.Fatal(err)
		}
		if got := as.Annotations[v1alpha1.AnnotationApplicationSetRefresh]; got != want {
			t.Errorf("the set in %s marked %q, want %q", ns, got, want)
		}
	}
}
