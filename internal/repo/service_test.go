package repo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/cache"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
	"github.com/capstan-cd/capstan/internal/testing/chartserver"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

type staticCreds git.Creds

func (c staticCreds) ForRepo(context.Context, string, string) (git.Creds, error) {
	return git.Creds(c), nil
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.25}]
`

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func newService(t *testing.T, srv *gitserver.Server, c cache.Cache) *Service {
	return NewService(Options{
		Root:        t.TempDir(),
		Credentials: staticCreds{Username: srv.Username, Password: srv.Password},
		Cache:       c,
		RefsTTL:     time.Nanosecond, // every render sees the latest push
	})
}

func TestRenderDirectoryFromGitAndCache(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "apps")
	sha := remote.Commit(t, "c1", map[string]string{
		"guestbook/deploy.yaml": deployment,
		"guestbook/svc.yaml":    "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
	})
	mem := cache.NewMemory(100)
	svc := newService(t, srv, mem)
	req := &Request{AppName: "guestbook", Namespace: "default", Sources: []v1alpha1.ApplicationSource{
		{RepoURL: remote.URL, Path: "guestbook", TargetRevision: "main"},
	}}
	resp, err := svc.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(resp.Objects), []string{"Deployment/web", "Service/web"}; !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
	if !reflect.DeepEqual(resp.Sources[0], SourceResult{Revision: sha, Type: v1alpha1.SourceTypeDirectory}) {
		t.Errorf("source result = %+v", resp.Sources[0])
	}
	if !reflect.DeepEqual(resp.Images, []string{"nginx:1.25"}) {
		t.Errorf("images = %v", resp.Images)
	}

	again, err := svc.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if hits, _ := mem.Stats(); hits != 1 {
		t.Errorf("second render of the same commit: %d cache hits, want 1", hits)
	}
	if !reflect.DeepEqual(again, resp) {
		t.Error("cached response differs from the rendered one")
	}

	// A new commit changes the key: rendered again, with the new object.
	sha2 := remote.Commit(t, "c2", map[string]string{"guestbook/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n"})
	resp, err = svc.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Sources[0].Revision != sha2 || len(resp.Objects) != 3 {
		t.Errorf("after a push: revision %s objects %v", resp.Sources[0].Revision, names(resp.Objects))
	}

	// Rendering an older revision explicitly (a rollback) still works.
	old, err := svc.Render(context.Background(), &Request{AppName: "guestbook", Sources: req.Sources, Revisions: []string{sha}})
	if err != nil || len(old.Objects) != 2 {
		t.Errorf("render at %s: %v, %v", sha, err, old)
	}
}

func TestFailuresAreCachedBriefly(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "broken")
	remote.Commit(t, "c", map[string]string{"app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   bad: indent\n"})
	svc := newService(t, srv, nil)
	req := &Request{AppName: "b", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}}

	_, err := svc.Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Fatalf("first render: %v", err)
	}
	if errors.Is(err, ErrCachedFailure) {
		t.Error("first failure reported as cached")
	}
	if _, err := svc.Render(context.Background(), req); !errors.Is(err, ErrCachedFailure) || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("second render: got %v, want the cached failure", err)
	}
	req.NoCache = true
	if _, err := svc.Render(context.Background(), req); errors.Is(err, ErrCachedFailure) || err == nil {
		t.Errorf("hard refresh: got %v, want a fresh failure", err)
	}
}

func TestOverrideFilesAndKustomize(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "kust")
	remote.Commit(t, "c", map[string]string{
		"app/kustomization.yaml":  "resources: [deploy.yaml]\n",
		"app/deploy.yaml":         deployment,
		"app/.argocd-source.yaml": "kustomize:\n  namePrefix: all-\n  images: [nginx:1.26]\n",
		// What the image updater writes for Application "shop": it wins.
		"app/.argocd-source-shop.yaml": "kustomize:\n  images: [nginx:1.27]\n",
	})
	svc := newService(t, srv, nil)
	for app, want := range map[string]string{"shop": "nginx:1.27", "other": "nginx:1.26"} {
		resp, err := svc.Render(context.Background(), &Request{AppName: app, Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Sources[0].Type != v1alpha1.SourceTypeKustomize {
			t.Errorf("type = %s", resp.Sources[0].Type)
		}
		if got := resp.Objects[0].GetName(); got != "all-web" {
			t.Errorf("%s: name %s, want all-web from .argocd-source.yaml", app, got)
		}
		if !reflect.DeepEqual(resp.Images, []string{want}) {
			t.Errorf("%s: images %v, want %s", app, resp.Images, want)
		}
	}
}

func TestMultiSourceAndRefOnlySources(t *testing.T) {
	srv := gitserver.New(t)
	a := srv.NewRepo(t, "a")
	shaA := a.Commit(t, "a", map[string]string{"x/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-a}\n"})
	b := srv.NewRepo(t, "b")
	shaB := b.Commit(t, "b", map[string]string{"y/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-b}\n"})
	svc := newService(t, srv, nil)
	resp, err := svc.Render(context.Background(), &Request{AppName: "m", Sources: []v1alpha1.ApplicationSource{
		{RepoURL: a.URL, Path: "x"},
		{RepoURL: b.URL, Ref: "values"},
		{RepoURL: b.URL, Path: "y"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(resp.Objects), []string{"ConfigMap/from-a", "ConfigMap/from-b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
	want := []SourceResult{{Revision: shaA, Type: v1alpha1.SourceTypeDirectory}, {Revision: shaB}, {Revision: shaB, Type: v1alpha1.SourceTypeDirectory}}
	if !reflect.DeepEqual(resp.Sources, want) {
		t.Errorf("sources = %+v, want %+v", resp.Sources, want)
	}
}

func TestBadSources(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "r")
	remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	svc := newService(t, srv, nil)
	render := func(src v1alpha1.ApplicationSource) error {
		_, err := svc.Render(context.Background(), &Request{AppName: "x", Sources: []v1alpha1.ApplicationSource{src}})
		return err
	}
	if err := render(v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "../../etc"}); !errors.Is(err, pathsafe.ErrOutOfBounds) {
		t.Errorf("traversal: %v", err)
	}
	if err := render(v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "missing"}); err == nil || !strings.Contains(err.Error(), `path "missing" does not exist`) {
		t.Errorf("missing path: %v", err)
	}
	if err := render(v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app", TargetRevision: "nope"}); !errors.Is(err, git.ErrRevisionNotFound) {
		t.Errorf("missing revision: %v", err)
	}
	if err := render(v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app",
		Kustomize: &v1alpha1.ApplicationSourceKustomize{NamePrefix: "a"}, Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true}}); err == nil || !strings.Contains(err.Error(), "multiple") {
		t.Errorf("two explicit types: %v", err)
	}
	wrong := NewService(Options{Root: t.TempDir(), Credentials: staticCreds{Username: srv.Username, Password: "wrong"}})
	if _, err := wrong.Render(context.Background(), &Request{Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}}); !errors.Is(err, git.ErrAuthentication) {
		t.Errorf("wrong password: %v", err)
	}
}

func TestHelmChartInGitWithValuesFromAnotherSource(t *testing.T) {
	srv := gitserver.New(t)
	charts := srv.NewRepo(t, "charts")
	charts.Commit(t, "chart", map[string]string{
		"web/Chart.yaml":            "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"web/values.yaml":           "replicas: 1\nimage: nginx:1.25\n",
		"web/templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: {{ .Release.Namespace }}\nspec:\n  replicas: {{ .Values.replicas }}\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: {{ .Values.image | quote }}}]\n",
	})
	values := srv.NewRepo(t, "values")
	values.Commit(t, "values", map[string]string{"prod/web.yaml": "replicas: 4\n"})
	svc := newService(t, srv, nil)
	resp, err := svc.Render(context.Background(), &Request{AppName: "web-prod", Namespace: "prod", Sources: []v1alpha1.ApplicationSource{
		{RepoURL: charts.URL, Path: "web", Helm: &v1alpha1.ApplicationSourceHelm{
			ValueFiles: []string{"$values/prod/web.yaml"},
			Parameters: []v1alpha1.HelmParameter{{Name: "image", Value: "nginx:1.27"}},
		}},
		{RepoURL: values.URL, Ref: "values"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Objects) != 1 {
		t.Fatalf("objects = %v", names(resp.Objects))
	}
	d := resp.Objects[0]
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	if d.GetName() != "web-prod" || d.GetNamespace() != "prod" || replicas != 4 {
		t.Errorf("deployment %s/%s replicas %d; want prod/web-prod with 4 from $values", d.GetNamespace(), d.GetName(), replicas)
	}
	if resp.Sources[0].Type != v1alpha1.SourceTypeHelm || !reflect.DeepEqual(resp.Images, []string{"nginx:1.27"}) {
		t.Errorf("type %s images %v", resp.Sources[0].Type, resp.Images)
	}
}

func TestHelmChartRepositories(t *testing.T) {
	chart := chartserver.Chart{Name: "web", Version: "1.2.0", Files: map[string]string{
		"values.yaml":       "replicas: 1\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
		"values-prod.yaml":  "replicas: 3\n",
	}}
	httpRepo := chartserver.NewHTTPRepo(t, chart)
	oci := chartserver.NewOCIRegistry(t, chart)
	svc := NewService(Options{Root: t.TempDir(), OCIPlainHTTP: true,
		Credentials: staticCreds{Username: httpRepo.Username, Password: httpRepo.Password}})
	for name, repoURL := range map[string]string{"http": httpRepo.URL, "oci": oci.URL} {
		t.Run(name, func(t *testing.T) {
			resp, err := svc.Render(context.Background(), &Request{AppName: "web-" + name, Namespace: "prod", Sources: []v1alpha1.ApplicationSource{{
				RepoURL: repoURL, Chart: "web", TargetRevision: "1.*",
				Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml"}},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp.Sources[0], SourceResult{Revision: "1.2.0", Type: v1alpha1.SourceTypeHelm}) {
				t.Errorf("source = %+v", resp.Sources[0])
			}
			if len(resp.Objects) != 1 || resp.Objects[0].GetName() != "web-"+name {
				t.Fatalf("objects = %v", names(resp.Objects))
			}
			if v, _, _ := unstructured.NestedString(resp.Objects[0].Object, "data", "replicas"); v != "3" {
				t.Errorf("replicas = %q, want 3 from the chart's values-prod.yaml", v)
			}
		})
	}
}

func TestHelmDependenciesFetchedFromTheirRepositories(t *testing.T) {
	checkHelmDependenciesFetched(t, NewService)
}

// checkHelmDependenciesFetched runs the test with a
// Service made by newService from the options it needs.
func checkHelmDependenciesFetched(t *testing.T, newService func(Options) *Service) {
	lib := chartserver.Chart{Name: "lib", Version: "0.3.1", Files: map[string]string{
		"values.yaml":       "greeting: hello\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-lib\ndata:\n  greeting: {{ .Values.greeting }}\n",
	}}
	httpRepo := chartserver.NewHTTPRepo(t, lib)
	oci := chartserver.NewOCIRegistry(t, chartserver.Chart{Name: "cache", Version: "1.0.0", Files: map[string]string{
		"templates/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}-cache\n",
	}})
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "umbrella")
	remote.Commit(t, "umbrella", map[string]string{
		"app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n" +
			"- name: lib\n  version: ~0.3.0\n  repository: \"@libs\"\n" +
			"- name: cache\n  version: 1.0.0\n  repository: " + oci.URL + "\n" +
			"- name: local\n  version: 0.1.0\n  repository: file://../local\n",
		"app/values.yaml":            "lib:\n  greeting: from-umbrella\n",
		"local/Chart.yaml":           "apiVersion: v2\nname: local\nversion: 0.1.0\n",
		"local/templates/local.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-local\n",
	})
	creds := namedCreds{credsByURL: credsByURL{
		remote.URL:   git.Creds{Username: srv.Username, Password: srv.Password},
		httpRepo.URL: git.Creds{Username: httpRepo.Username, Password: httpRepo.Password},
	}, names: map[string]string{"libs": httpRepo.URL}} // the lib chart's repository is named: @libs
	svc := newService(Options{Root: t.TempDir(), OCIPlainHTTP: true, Credentials: creds})
	resp, err := svc.Render(context.Background(), &Request{AppName: "umb", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := names(resp.Objects)
	sort.Strings(got)
	if want := []string{"ConfigMap/umb-lib", "ConfigMap/umb-local", "Service/umb-cache"}; !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
	for _, o := range resp.Objects {
		if o.GetName() == "umb-lib" {
			if g, _, _ := unstructured.NestedString(o.Object, "data", "greeting"); g != "from-umbrella" {
				t.Errorf("subchart value = %q, want the parent's override", g)
			}
		}
	}
}

// checkKustomizeHelmCharts: a kustomization inflating a chart from a
// private repository (--enable-helm) gets it with the repository's
// credentials, and sees the destination's Kubernetes version.
func checkKustomizeHelmCharts(t *testing.T, newService func(Options) *Service) {
	web := chartserver.Chart{Name: "web", Version: "1.0.0", Files: map[string]string{
		"values.yaml":       "greeting: hello\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-web\ndata:\n  greeting: {{ .Values.greeting }}\n  kube: {{ .Capabilities.KubeVersion.Version }}\n",
	}}
	httpRepo := chartserver.NewHTTPRepo(t, web)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "kustomize with helm", map[string]string{
		"app/kustomization.yaml": "namePrefix: k-\nhelmCharts:\n- {name: web, repo: " + httpRepo.URL + ", version: 1.0.0, releaseName: shop, valuesInline: {greeting: hi}}\n",
	})
	svc := newService(Options{Root: t.TempDir(), Credentials: credsByURL{httpRepo.URL: {Username: httpRepo.Username, Password: httpRepo.Password}}})
	req := &Request{AppName: "shop", KubeVersion: "1.30.2", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}}
	if _, err := svc.Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), "must specify --enable-helm") {
		t.Fatalf("without --enable-helm: %v", err)
	}
	req.KustomizeBuildOptions = "--enable-helm"
	resp, err := svc.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Objects) != 1 || resp.Objects[0].GetName() != "k-shop-web" {
		t.Fatalf("objects = %v", names(resp.Objects))
	}
	data, _, _ := unstructured.NestedStringMap(resp.Objects[0].Object, "data")
	if data["greeting"] != "hi" || data["kube"] != "v1.30.2" {
		t.Errorf("data = %v, want the inline greeting and the destination's version", data)
	}
}

func TestKustomizeHelmCharts(t *testing.T) {
	checkKustomizeHelmCharts(t, NewService)
}

// credsByURL gives each repository its own credentials.
type credsByURL map[string]git.Creds

func (c credsByURL) ForRepo(_ context.Context, url, _ string) (git.Creds, error) { return c[url], nil }

// namedCreds also knows repositories by name, as Helm aliases use them.
type namedCreds struct {
	credsByURL
	names map[string]string
}

func (c namedCreds) URLByName(_ context.Context, name, _ string) (string, error) {
	if url, ok := c.names[name]; ok {
		return url, nil
	}
	return "", fmt.Errorf("no repository is named %q", name)
}

func TestManifestSizeLimit(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: " + strings.Repeat("z", 5000) + "\n"})
	svc := NewService(Options{Root: t.TempDir(), MaxManifestBytes: 4000})
	_, err := svc.Render(context.Background(), &Request{AppName: "big", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}})
	if err == nil || !strings.Contains(err.Error(), "over the limit of 4000") {
		t.Errorf("got %v, want the manifest size limit error", err)
	}
}

func TestSymlinkEscapingTheCheckoutIsRefused(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	remote.Symlink(t, "app/passwd.yaml", "/etc/passwd")
	svc := NewService(Options{Root: t.TempDir()})
	_, err := svc.Render(context.Background(), &Request{AppName: "x", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}})
	if !errors.Is(err, pathsafe.ErrOutOfBounds) || !strings.Contains(err.Error(), "passwd.yaml") {
		t.Errorf("got %v, want ErrOutOfBounds naming the link", err)
	}
}

// TestParallelismLimit: with reposerver.parallelism.limit renders beyond
// the limit wait for a turn, and give up with their context.
func TestParallelismLimit(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limited}\n"})
	s := NewService(Options{Root: t.TempDir(), ParallelismLimit: 1})
	req := &Request{AppName: "limited", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}, NoCache: true}

	s.turns <- struct{}{} // another render holds the only turn
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Render(ctx, req); err == nil || !strings.Contains(err.Error(), "waiting for a turn") {
		t.Fatalf("render beyond the limit: %v, want it to wait for a turn", err)
	}
	<-s.turns
	if resp, err := s.Render(context.Background(), req); err != nil || len(resp.Objects) != 1 {
		t.Fatalf("render with a turn free: %v", err)
	}
}

// TestVersionConstraintOnTags: a targetRevision that is a version
// constraint renders the highest matching tag, among those starting with
// the source's tagPrefix, and follows a newer tag once it is pushed.
func TestVersionConstraintOnTags(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	release := func(tag, v string) string {
		sha := remote.Commit(t, tag, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + v + "}\n"})
		remote.Tag(t, tag)
		return sha
	}
	release("component-b/1.0.0", "b100")
	want := release("component-b/1.0.1", "b101")
	release("component-a/1.0.5", "a105")
	release("component-b/2.0.0", "b200")
	s := NewService(Options{Root: t.TempDir()})
	req := &Request{AppName: "b", NoCache: true, Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app", TargetRevision: "1.0.*", TagPrefix: "component-b/"}}}
	resp, err := s.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Sources[0].Revision != want || resp.Objects[0].GetName() != "b101" {
		t.Fatalf("rendered %s at %s, want b101 at %s", resp.Objects[0].GetName(), resp.Sources[0].Revision, want)
	}
	newer := release("component-b/1.0.2", "b102")
	got, err := s.Resolve(context.Background(), &ResolveRequest{RepoURL: remote.URL, Revision: "1.0.*", TagPrefix: "component-b/"})
	if err != nil || got.Revision != newer {
		t.Fatalf("resolved %v (%v), want the newer tag's %s", got, err, newer)
	}
}

// TestHiddenDirectoriesThroughTheService: Options.Directories reaches
// both ways a directory source is rendered in-process: from the commit's
// objects, and from a checkout (Jsonnet). Workers get it in their job.
func TestHiddenDirectoriesThroughTheService(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "apps")
	remote.Commit(t, "c1", map[string]string{
		"app/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shown}\n",
		"app/.hidden/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n",
		"jsonnet/a.jsonnet":   "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'shown'}}",
		"jsonnet/.h/b.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n",
	})
	for _, include := range []bool{false, true} {
		svc := NewService(Options{Root: t.TempDir(), Credentials: staticCreds{Username: srv.Username, Password: srv.Password},
			Directories: directory.Walk{IncludeHidden: include}})
		for _, path := range []string{"app", "jsonnet"} { // from objects; from a checkout (Jsonnet)
			resp, err := svc.Render(context.Background(), &Request{AppName: "a", Namespace: "default", Sources: []v1alpha1.ApplicationSource{
				{RepoURL: remote.URL, Path: path, TargetRevision: "main", Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true}}}})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"ConfigMap/shown"}
			if include {
				want = []string{"ConfigMap/hidden", "ConfigMap/shown"}
			}
			if got := names(resp.Objects); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, hidden directories included %t: %v, want %v", path, include, got, want)
			}
		}
	}
}

// TestDirectorySizeBoundThroughTheService: the combined size bound of
// Options.Directories (reposerver.max.combined.directory.manifests.size)
// holds from the commit's objects and from a checkout (Jsonnet).
func TestDirectorySizeBoundThroughTheService(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "apps")
	files := map[string]string{"jsonnet/a.jsonnet": "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'j'}}"}
	for i := range 3 {
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {blob: %q}\n", i, strings.Repeat("x", 1000))
		files[fmt.Sprintf("app/cm-%d.yaml", i)] = cm
		files[fmt.Sprintf("jsonnet/cm-%d.yaml", i)] = cm
	}
	remote.Commit(t, "c1", files)
	for _, bound := range []int64{2500, 0} {
		svc := NewService(Options{Root: t.TempDir(), Credentials: staticCreds{Username: srv.Username, Password: srv.Password},
			Directories: directory.Walk{MaxCombinedBytes: bound}})
		for _, path := range []string{"app", "jsonnet"} {
			_, err := svc.Render(context.Background(), &Request{AppName: "a", Namespace: "default", Sources: []v1alpha1.ApplicationSource{
				{RepoURL: remote.URL, Path: path, TargetRevision: "main"}}})
			if bound > 0 && (err == nil || !strings.Contains(err.Error(), "over 2500 bytes")) {
				t.Errorf("%s over a bound of %d: %v", path, bound, err)
			}
			if bound == 0 && err != nil {
				t.Errorf("%s under the default bound: %v", path, err)
			}
		}
	}
}
