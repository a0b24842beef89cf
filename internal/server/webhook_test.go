package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

const githubPush = `{"ref":"refs/heads/main","repository":{"html_url":"https://github.com/org/app","clone_url":"https://github.com/org/app.git","ssh_url":"git@github.com:org/app.git","default_branch":"main"}}`

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return hex.EncodeToString(mac.Sum(nil))
}

// post sends a webhook with headers and returns the status.
func (f *fixture) post(body string, headers map[string]string) int {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.base+"/api/webhook", strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (f *fixture) setSecret(key, value string) {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: settings.ServerSecretName}, s); err != nil {
		f.t.Fatal(err)
	}
	s.Data[key] = []byte(value)
	if err := f.c.Update(context.Background(), s); err != nil {
		f.t.Fatal(err)
	}
}

func TestWebhooksAreVerifiedAndRefreshFollowers(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false)
	f.setSecret("webhook.github.secret", "gh-secret")
	f.setSecret("webhook.gitlab.secret", "gl-token")
	for _, a := range []struct{ name, url, rev string }{
		{"on-main", "https://github.com/org/app", "main"},
		{"on-head", "git@github.com:org/app.git", "HEAD"},
		{"on-other-branch", "https://github.com/org/app.git", "release"},
		{"other-repo", "https://github.com/org/other", "main"},
	} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"},
				Source: &v1alpha1.ApplicationSource{RepoURL: a.url, TargetRevision: a.rev}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	if code := f.post(githubPush, map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign("wrong", githubPush)}); code != 400 {
		t.Errorf("a GitHub push signed with the wrong secret: %d, want 400", code)
	}
	if code := f.post(githubPush, map[string]string{"X-GitHub-Event": "push"}); code != 400 {
		t.Errorf("an unsigned GitHub push when a secret is set: %d, want 400", code)
	}
	refreshed := func() []string {
		var list v1alpha1.ApplicationList
		if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range list.Items {
			if _, ok := a.Annotations[v1alpha1.AnnotationRefresh]; ok {
				out = append(out, a.Name)
			}
		}
		return out
	}
	if got := refreshed(); len(got) != 0 {
		t.Fatalf("refused webhooks refreshed %v", got)
	}
	if code := f.post(githubPush, map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign("gh-secret", githubPush)}); code != 200 {
		t.Fatalf("a signed GitHub push: %d", code)
	}
	if got := strings.Join(refreshed(), ","); got != "on-head,on-main" {
		t.Errorf("refreshed %s, want on-head,on-main", got)
	}

	gitlab := `{"ref":"refs/heads/main","project":{"web_url":"https://gitlab.com/org/app","git_http_url":"https://gitlab.com/org/app.git","git_ssh_url":"git@gitlab.com:org/app.git","default_branch":"main"}}`
	if code := f.post(gitlab, map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "nope"}); code != 400 {
		t.Errorf("a GitLab push with the wrong token: %d", code)
	}
	if code := f.post(`{}`, map[string]string{"X-Unknown": "x"}); code != 400 {
		t.Errorf("an unknown webhook: %d", code)
	}
	if code := f.post(`{"zen":"hi"}`, map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": "sha256=" + sign("gh-secret", `{"zen":"hi"}`)}); code != 200 {
		t.Errorf("a GitHub ping: %d, want 200", code)
	}
}

func TestWebhookTellsTheInProcessController(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	c, err := kube.NewClient(kubeCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := kubeCluster.NewNamespace(t)
	var mu sync.Mutex
	var heard []string
	if err := kube.InstallCRDs(context.Background(), kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Options{Client: c, Config: kubeCluster.Config, Renderer: repo.NewService(repo.Options{Root: t.TempDir()}), Namespace: ns, Insecure: true, RepoChanged: func(c repo.Change) {
		mu.Lock()
		heard = append(heard, c.URL)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	gitea := `{"ref":"refs/heads/main","repository":{"html_url":"https://gitea.example.com/org/app","clone_url":"https://gitea.example.com/org/app.git"}}`
	req, _ := http.NewRequest("POST", "/api/webhook", strings.NewReader(gitea))
	req.Header.Set("X-Gitea-Event", "push")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || strings.Join(heard, " ") != "https://gitea.example.com/org/app https://gitea.example.com/org/app.git" {
		t.Errorf("status %d, controller heard %v", rec.Code, heard)
	}
}

// TestWebhookRefreshesOnlyTouchedPaths: with the refresh annotation (no
// in-process controller), a push that lists its files refreshes an
// Application naming manifest-generate-paths only when a file is under
// one of them; one without the annotation, or a push without files,
// refreshes as before.
func TestWebhookRefreshesOnlyTouchedPaths(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false)
	for _, a := range []struct{ name, repo, path, paths string }{
		{"web", "mono", "apps/web", "."},
		{"api", "mono", "apps/api", ".;/lib"},
		{"plain", "mono", "apps/api", ""},
		{"unlisted", "other", "apps/api", "."},
	} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"},
				Source: &v1alpha1.ApplicationSource{RepoURL: "https://gitea.example.com/org/" + a.repo, Path: a.path, TargetRevision: "main"}}}
		if a.paths != "" {
			app.Annotations = map[string]string{v1alpha1.AnnotationManifestGeneratePaths: a.paths}
		}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	push := func(repo, commits string) {
		body := `{"ref":"refs/heads/main","repository":{"html_url":"https://gitea.example.com/org/` + repo + `"},"commits":` + commits + `}`
		if code := f.post(body, map[string]string{"X-Gitea-Event": "push"}); code != 200 {
			t.Fatalf("push: %d", code)
		}
	}
	push("mono", `[{"modified":["apps/web/deploy.yaml"]},{"added":["docs/README.md"]}]`)
	push("other", `[]`)
	var list v1alpha1.ApplicationList
	if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	var refreshed []string
	for _, a := range list.Items {
		if _, ok := a.Annotations[v1alpha1.AnnotationRefresh]; ok {
			refreshed = append(refreshed, a.Name)
		}
	}
	if got := strings.Join(refreshed, ","); got != "plain,unlisted,web" {
		t.Errorf("refreshed %s, want plain,unlisted,web", got)
	}
	push("mono", `[{"removed":["lib/util.libsonnet"]}]`)
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "api"}, &list.Items[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok := list.Items[0].Annotations[v1alpha1.AnnotationRefresh]; !ok {
		t.Error("a change under /lib did not refresh api")
	}
}

// TestWebhookRefreshesApplicationSets: a push marks the ApplicationSets
// whose git generators read the pushed repository and branch, at the top
// or inside a matrix, for the ApplicationSet controller to run now.
func TestWebhookRefreshesApplicationSets(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	git := func(url, rev string) *v1alpha1.GitGenerator {
		return &v1alpha1.GitGenerator{RepoURL: url, Revision: rev, Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "*"}}}
	}
	sets := map[string]v1alpha1.ApplicationSetGenerator{
		"reads":      {ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{Git: git("https://github.com/org/app.git", "main")}},
		"reads-head": {ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{Git: git("git@github.com:org/app.git", "HEAD")}},
		"other-rev":  {ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{Git: git("https://github.com/org/app", "release")}},
		"other-repo": {ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{Git: git("https://github.com/org/other", "main")}},
		"in-a-matrix": {Matrix: &v1alpha1.MatrixGenerator{Generators: []v1alpha1.ApplicationSetNestedGenerator{
			{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{List: &v1alpha1.ListGenerator{}}},
			{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{Git: git("https://github.com/org/app", "main")}},
		}}},
	}
	for name, gen := range sets {
		as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSetSpec{Generators: []v1alpha1.ApplicationSetGenerator{gen}}}
		if err := f.c.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	if code := f.post(githubPush, map[string]string{"X-GitHub-Event": "push"}); code != 200 {
		t.Fatalf("a GitHub push: %d", code)
	}
	var list v1alpha1.ApplicationSetList
	if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	var marked []string
	for _, as := range list.Items {
		if as.Annotations[v1alpha1.AnnotationApplicationSetRefresh] == "true" {
			marked = append(marked, as.Name)
		}
	}
	slices.Sort(marked)
	if got := strings.Join(marked, ","); got != "in-a-matrix,reads,reads-head" {
		t.Errorf("marked %s, want in-a-matrix,reads,reads-head", got)
	}
}
