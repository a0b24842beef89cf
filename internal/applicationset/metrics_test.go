package applicationset_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/metricscrape"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// TestMetrics: the controller's /metrics serves Argo CD's ApplicationSet
// metrics for a real ApplicationSet (its info, the Applications it owns,
// its reconciles) and client-go's request metrics.
func TestMetrics(t *testing.T) {
	localcluster.Need(t)
	addr := metricscrape.Addr(t)
	e := start(t, func(o *applicationset.Options) { o.MetricsAddr = addr })
	as := &v1alpha1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: "measured", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				List: &v1alpha1.ListGenerator{Elements: elements(t, map[string]any{"n": "a"}, map[string]any{"n": "b"})},
			}}},
			Template: v1alpha1.ApplicationSetTemplate{
				ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "measured-{{n}}"},
				Spec: v1alpha1.ApplicationSpec{Project: "default",
					Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/r", Path: "{{n}}"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{n}}"}},
			},
		},
	}
	if err := e.client.Create(context.Background(), as); err != nil {
		t.Fatal(err)
	}
	e.waitApps("measured-a", "measured-b")
	want := []string{
		fmt.Sprintf(`argocd_appset_info{name="measured",namespace="%s",resource_update_status="ApplicationSetUpToDate"} 1`, e.ns),
		fmt.Sprintf(`argocd_appset_owned_applications{name="measured",namespace="%s"} 2`, e.ns),
		fmt.Sprintf(`argocd_appset_reconcile_count{name="measured",namespace="%s"}`, e.ns),
		`argocd_kubectl_requests_total{code="200",host="`,
	}
	metricscrape.Until(t, addr, want...)
}

// TestGitHubAPIMetrics: with GitHubAPIMetrics, the pull request
// generator's calls to GitHub's API (go-github against a local server
// speaking it) are counted for their ApplicationSet, with the rate limit
// GitHub reports.
func TestGitHubAPIMetrics(t *testing.T) {
	localcluster.Need(t)
	addr := metricscrape.Addr(t)
	e := start(t, func(o *applicationset.Options) { o.MetricsAddr, o.GitHubAPIMetrics = addr, true })
	gh := scmserver.GitHub(t, "gh-token", "org", "shop")
	gh.Add(scmserver.PullRequest{Head: "feature", Base: "main", Title: "Feature", HeadSHA: "0123456789abcdef", Author: "ana"})
	ctx := context.Background()
	if err := e.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "github-token", Namespace: e.ns},
		StringData: map[string]string{"token": "gh-token"}}); err != nil {
		t.Fatal(err)
	}
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "prs", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			PullRequest: &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "org", Repo: "shop", API: gh.URL,
				TokenRef: &v1alpha1.SecretRef{SecretName: "github-token", Key: "token"}}},
		}}},
		Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "pr-{{number}}"},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/org/shop.git", Path: "deploy"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "pr-{{number}}"}},
		},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	e.waitApps("pr-1")
	labels := fmt.Sprintf(`appset_name="prs",appset_namespace="%s",endpoint="/api/v3/repos/org/shop/pulls"`, e.ns)
	want := []string{
		`argocd_github_api_requests_total{` + labels + `,method="GET",status="200"}`,
		`argocd_github_api_request_duration_seconds_count{` + labels + `,method="GET"}`,
		`argocd_github_api_rate_limit_limit{` + labels + `,resource="core"} 5000`,
		`argocd_github_api_rate_limit_remaining{` + labels + `,resource="core"} 49`,
		`argocd_github_api_rate_limit_used{` + labels + `,resource="core"}`,
		`argocd_github_api_rate_limit_reset_seconds{` + labels + `,resource="core"} 3`,
	}
	metricscrape.Until(t, addr, want...)
}
