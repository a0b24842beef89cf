package applicationset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

var testCluster *localcluster.Cluster

// The garbage collector (kube-controller-manager) deletes the
// Applications of a deleted ApplicationSet, so it runs too.
func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{Workloads: true}, &testCluster))
}

// env is a running ApplicationSet controller with a control namespace of its own.
type env struct {
	t      *testing.T
	ns     string
	client client.Client
}

func start(t *testing.T, change func(*applicationset.Options)) *env {
	localcluster.Need(t)
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := kube.InstallCRDs(ctx, testCluster.Config); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ns: testCluster.NewNamespace(t), client: c}
	if err := settings.EnsureDefaultProject(ctx, c, e.ns); err != nil {
		t.Fatal(err)
	}
	opts := applicationset.Options{
		Config: testCluster.Config, Namespace: e.ns,
		Git: repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second}),
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	if change != nil {
		change(&opts)
	}
	done := make(chan error, 1)
	go func() { done <- applicationset.Run(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	return e
}

// eventually polls cond until it returns "" or a minute passes.
func (e *env) eventually(what string, cond func() string) {
	e.t.Helper()
	eventually.String(e.t, what, cond)
}

// in is e for a subtest.
func (e *env) in(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// apps returns the Applications of the namespace not being deleted, by
// name. (Without an application controller, a deleted Application with
// the resources finalizer stays, marked for deletion.)
func (e *env) apps() map[string]*v1alpha1.Application {
	var list v1alpha1.ApplicationList
	if err := e.client.List(context.Background(), &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*v1alpha1.Application{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out
}

func (e *env) waitApps(names ...string) map[string]*v1alpha1.Application {
	e.t.Helper()
	sort.Strings(names)
	var apps map[string]*v1alpha1.Application
	e.eventually("Applications "+strings.Join(names, ","), func() string {
		apps = e.apps()
		var got []string
		for n := range apps {
			got = append(got, n)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(names, ",") {
			return fmt.Sprintf("%v", got)
		}
		return ""
	})
	return apps
}

func (e *env) appset(name string) *v1alpha1.ApplicationSet {
	as := &v1alpha1.ApplicationSet{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, as); err != nil {
		e.t.Fatal(err)
	}
	return as
}

func (e *env) condition(name string, typ v1alpha1.ApplicationSetConditionType) v1alpha1.ApplicationSetCondition {
	for _, c := range e.appset(name).Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return v1alpha1.ApplicationSetCondition{}
}

func (e *env) update(name string, change func(*v1alpha1.ApplicationSet)) {
	e.t.Helper()
	for range 10 {
		as := e.appset(name)
		change(as)
		err := e.client.Update(context.Background(), as)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			e.t.Fatal(err)
		}
	}
	e.t.Fatal("too many conflicts")
}

func elements(t *testing.T, elems ...map[string]any) []apiextensionsv1.JSON {
	var out []apiextensionsv1.JSON
	for _, el := range elems {
		data, err := json.Marshal(el)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, apiextensionsv1.JSON{Raw: data})
	}
	return out
}

func clusterSecret(ns, name, server string, labels map[string]string) *corev1.Secret {
	l := map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l},
		StringData: map[string]string{"name": name, "server": server, "config": "{}"},
	}
}

// TestClustersTimesListLifecycle runs a matrix of the clusters generator
// (by label) and a list generator end to end: Applications are created
// with their owner and finalizer, follow the generators as clusters and
// elements come and go, keep what the policy keeps, and go with the
// ApplicationSet.
func TestClustersTimesListLifecycle(t *testing.T) {
	localcluster.Need(t)
	e := start(t, nil)
	ctx := context.Background()
	for _, s := range []*corev1.Secret{
		clusterSecret(e.ns, "staging", "https://staging.example", map[string]string{"env": "staging"}),
		clusterSecret(e.ns, "prod", "https://prod.example", map[string]string{"env": "prod"}),
	} {
		if err := e.client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	as := &v1alpha1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSetSpec{
			GoTemplate:        true,
			GoTemplateOptions: []string{"missingkey=error"},
			Generators: []v1alpha1.ApplicationSetGenerator{{Matrix: &v1alpha1.MatrixGenerator{
				Generators: []v1alpha1.ApplicationSetNestedGenerator{
					{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{Clusters: &v1alpha1.ClusterGenerator{
						Selector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpExists}}},
					}}},
					{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{List: &v1alpha1.ListGenerator{
						Elements: elements(t, map[string]any{"app": "web"}, map[string]any{"app": "api"}),
					}}},
				},
			}}},
			Template: v1alpha1.ApplicationSetTemplate{
				ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{
					Name:   "{{.name}}-{{.app}}",
					Labels: map[string]string{"env": "{{index .metadata.labels \"env\"}}"},
				},
				Spec: v1alpha1.ApplicationSpec{
					Project:     "default",
					Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/apps", Path: "{{.app}}", TargetRevision: "main"},
					Destination: v1alpha1.ApplicationDestination{Server: "{{.server}}", Namespace: "{{.app}}"},
				},
			},
		},
	}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	uid := e.appset("guestbook").UID

	t.Run("one Application per cluster and element", func(t *testing.T) {
		e := e.in(t)
		apps := e.waitApps("prod-api", "prod-web", "staging-api", "staging-web")
		a := apps["staging-web"]
		if a.Spec.Destination.Server != "https://staging.example" || a.Spec.Source.Path != "web" || a.Labels["env"] != "staging" {
			t.Errorf("staging-web = %+v %+v", a.Labels, a.Spec)
		}
		if len(a.OwnerReferences) != 1 || a.OwnerReferences[0].UID != uid || a.OwnerReferences[0].Kind != "ApplicationSet" {
			t.Errorf("owner = %+v", a.OwnerReferences)
		}
		if len(a.Finalizers) != 1 || a.Finalizers[0] != v1alpha1.ResourcesFinalizerName {
			t.Errorf("finalizers = %v", a.Finalizers)
		}
		e.eventually("status", func() string {
			s := e.appset("guestbook").Status
			c := e.condition("guestbook", v1alpha1.ApplicationSetConditionResourcesUpToDate)
			if s.ResourcesCount != 4 || len(s.Resources) != 4 || c.Status != "True" {
				return fmt.Sprintf("%d resources, %+v", s.ResourcesCount, s.Conditions)
			}
			return ""
		})
	})

	t.Run("a new cluster adds Applications, a removed element deletes them", func(t *testing.T) {
		e := e.in(t)
		if err := e.client.Create(ctx, clusterSecret(e.ns, "qa", "https://qa.example", map[string]string{"env": "qa"})); err != nil {
			t.Fatal(err)
		}
		e.waitApps("prod-api", "prod-web", "qa-api", "qa-web", "staging-api", "staging-web")
		e.update("guestbook", func(as *v1alpha1.ApplicationSet) {
			as.Spec.Generators[0].Matrix.Generators[1].List.Elements = elements(t, map[string]any{"app": "web"})
		})
		e.waitApps("prod-web", "qa-web", "staging-web")
	})

	t.Run("a user's change to a generated Application is undone, a preserved annotation kept", func(t *testing.T) {
		e := e.in(t)
		a := e.apps()["qa-web"]
		a.Spec.Source.Path = "elsewhere"
		a.Annotations = map[string]string{v1alpha1.AnnotationRefresh: "hard", "mine": "x"}
		if err := e.client.Update(ctx, a); err != nil {
			t.Fatal(err)
		}
		e.eventually("restored", func() string {
			a := e.apps()["qa-web"]
			if a.Spec.Source.Path != "web" || a.Annotations["mine"] != "" {
				return fmt.Sprintf("path %s annotations %v", a.Spec.Source.Path, a.Annotations)
			}
			if a.Annotations[v1alpha1.AnnotationRefresh] != "hard" {
				return "the refresh annotation was dropped"
			}
			return ""
		})
	})

	t.Run("create-only neither updates nor deletes", func(t *testing.T) {
		e := e.in(t)
		e.update("guestbook", func(as *v1alpha1.ApplicationSet) {
			p := v1alpha1.ApplicationsSyncPolicyCreateOnly
			as.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{ApplicationsSync: &p}
			as.Spec.Template.Spec.Source.TargetRevision = "v2"
			as.Spec.Generators[0].Matrix.Generators[1].List.Elements = elements(t, map[string]any{"app": "db"})
		})
		apps := e.waitApps("prod-db", "prod-web", "qa-db", "qa-web", "staging-db", "staging-web")
		if apps["prod-web"].Spec.Source.TargetRevision != "main" || apps["prod-db"].Spec.Source.TargetRevision != "v2" {
			t.Errorf("revisions %s %s", apps["prod-web"].Spec.Source.TargetRevision, apps["prod-db"].Spec.Source.TargetRevision)
		}
	})

	t.Run("an error is a condition, and changes nothing", func(t *testing.T) {
		e := e.in(t)
		e.update("guestbook", func(as *v1alpha1.ApplicationSet) {
			as.Spec.SyncPolicy = nil
			as.Spec.Template.Name = "{{.nope}}"
		})
		e.eventually("ErrorOccurred", func() string {
			c := e.condition("guestbook", v1alpha1.ApplicationSetConditionErrorOccurred)
			if c.Status != "True" || !strings.Contains(c.Message, `map has no entry for key "nope"`) {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		})
		if n := len(e.apps()); n != 6 {
			t.Errorf("%d Applications left", n)
		}
	})

	t.Run("deleting the ApplicationSet deletes its Applications", func(t *testing.T) {
		e := e.in(t)
		// With preserveResourcesOnDeletion the generated Applications lose
		// the resources finalizer. Those deleted before wait for it, as
		// the test has no application controller: it is taken off here.
		e.update("guestbook", func(as *v1alpha1.ApplicationSet) {
			as.Spec.Template.Name = "{{.name}}-{{.app}}"
			as.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{PreserveResourcesOnDeletion: true}
		})
		e.eventually("no finalizers", func() string {
			for _, a := range e.apps() {
				if len(a.Finalizers) > 0 {
					return a.Name + " has " + strings.Join(a.Finalizers, ",")
				}
			}
			return ""
		})
		var list v1alpha1.ApplicationList
		if err := e.client.List(ctx, &list, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			if a := &list.Items[i]; a.DeletionTimestamp != nil {
				a.Finalizers = nil
				if err := e.client.Update(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := e.client.Delete(ctx, e.appset("guestbook"), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		e.eventually("no Applications left", func() string {
			if err := e.client.List(ctx, &list, client.InNamespace(e.ns)); err != nil || len(list.Items) > 0 {
				return fmt.Sprintf("%d, %v", len(list.Items), err)
			}
			return ""
		})
	})
}

// TestGitGenerators reads a real Git repository through the repo server:
// directories (with an exclusion) and JSON/YAML files, and follows a push.
func TestGitGenerators(t *testing.T) {
	localcluster.Need(t)
	e := start(t, nil)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "apps", map[string]string{
		"apps/guestbook/kustomization.yaml": "resources: []\n",
		"apps/helm-guestbook/Chart.yaml":    "name: x\n",
		"apps/excluded/file.yaml":           "x: 1\n",
		"clusters/dev/config.json":          `{"cluster": {"name": "dev", "address": "https://dev.example"}}`,
		"clusters/prod/config.yaml":         "- cluster: {name: prod-a, address: https://a.example}\n- cluster: {name: prod-b, address: https://b.example}\n",
	})
	one := int64(1)
	tmpl := func(name, path string) v1alpha1.ApplicationSetTemplate {
		return v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: name},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: path, TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"}},
		}
	}
	for _, as := range []*v1alpha1.ApplicationSet{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "dirs", Namespace: e.ns},
			Spec: v1alpha1.ApplicationSetSpec{
				Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
					Git: &v1alpha1.GitGenerator{RepoURL: remote.URL, Revision: "main", RequeueAfterSeconds: &one,
						Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "apps/*"}, {Path: "apps/excluded", Exclude: true}}},
				}}},
				Template: tmpl("dir-{{path.basenameNormalized}}", "{{path}}"),
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "files", Namespace: e.ns},
			Spec: v1alpha1.ApplicationSetSpec{
				GoTemplate: true,
				Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
					Git: &v1alpha1.GitGenerator{RepoURL: remote.URL, Revision: "main", RequeueAfterSeconds: &one,
						Files: []v1alpha1.GitFileGeneratorItem{{Path: "clusters/**/config.*"}}},
				}}},
				Template: tmpl("file-{{.cluster.name}}", "{{.path.path}}"),
			},
		},
	} {
		if err := e.client.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	apps := e.waitApps("dir-guestbook", "dir-helm-guestbook", "file-dev", "file-prod-a", "file-prod-b")
	if p := apps["dir-helm-guestbook"].Spec.Source.Path; p != "apps/helm-guestbook" {
		t.Errorf("directory path = %s", p)
	}
	if p := apps["file-prod-b"].Spec.Source.Path; p != "clusters/prod" {
		t.Errorf("file path = %s", p)
	}

	remote.Commit(t, "a new app", map[string]string{"apps/new/kustomization.yaml": "resources: []\n"})
	e.waitApps("dir-guestbook", "dir-helm-guestbook", "dir-new", "file-dev", "file-prod-a", "file-prod-b")
}

// TestPreserveResourcesOnDeletion: generated Applications carry no
// resources finalizer, and one no longer generated is deleted without it.
func TestPreserveResourcesOnDeletion(t *testing.T) {
	localcluster.Need(t)
	e := start(t, nil)
	ctx := context.Background()
	as := &v1alpha1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: "keep", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSetSpec{
			SyncPolicy: &v1alpha1.ApplicationSetSyncPolicy{PreserveResourcesOnDeletion: true},
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				List: &v1alpha1.ListGenerator{Elements: elements(t, map[string]any{"n": "a"}, map[string]any{"n": "b"})},
			}}},
			Template: v1alpha1.ApplicationSetTemplate{
				ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "keep-{{n}}"},
				Spec: v1alpha1.ApplicationSpec{Project: "default",
					Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/r", Path: "{{n}}"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{n}}"}},
			},
		},
	}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	for _, a := range e.waitApps("keep-a", "keep-b") {
		if len(a.Finalizers) != 0 {
			t.Errorf("%s finalizers = %v", a.Name, a.Finalizers)
		}
	}
	e.update("keep", func(as *v1alpha1.ApplicationSet) {
		as.Spec.Generators[0].List.Elements = elements(t, map[string]any{"n": "a"})
	})
	e.waitApps("keep-a")
}

// TestRefreshAnnotation: an ApplicationSet marked for refresh (a webhook's
// push) runs its generators at once, not at its next period, and the mark
// is removed.
func TestRefreshAnnotation(t *testing.T) {
	localcluster.Need(t)
	e := start(t, nil)
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "apps", map[string]string{"apps/one/kustomization.yaml": "resources: []\n"})
	hour := int64(3600)
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "pushed", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			Git: &v1alpha1.GitGenerator{RepoURL: remote.URL, Revision: "main", RequeueAfterSeconds: &hour,
				Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "apps/*"}}}}}},
		Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{path.basename}}"},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "{{path}}", TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"}}},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	e.waitApps("one")
	remote.Commit(t, "two", map[string]string{"apps/two/kustomization.yaml": "resources: []\n"})
	time.Sleep(1100 * time.Millisecond) // past the repo server's one-second refs cache of the test
	start := time.Now()
	e.update("pushed", func(as *v1alpha1.ApplicationSet) {
		metav1.SetMetaDataAnnotation(&as.ObjectMeta, v1alpha1.AnnotationApplicationSetRefresh, "true")
	})
	e.waitApps("one", "two")
	t.Logf("a refresh to the new Application: %v", time.Since(start))
	e.eventually("the refresh mark removed", func() string {
		if v, ok := e.appset("pushed").Annotations[v1alpha1.AnnotationApplicationSetRefresh]; ok {
			return "still " + v
		}
		return ""
	})
}

// TestOCIGenerator: the OCI generator (Argo CD 3.6) reads a real
// registry's artifact, with the credentials of a repository Secret, as
// the Git generator reads a commit: its directories and its files.
func TestOCIGenerator(t *testing.T) {
	localcluster.Need(t)
	reg := registryserver.Start(t)
	repoURL := "oci://" + reg.Host + "/org/envs"
	reg.PushArtifact(t, "org/envs", registryserver.Artifact{Files: map[string]string{
		"envs/dev/kustomization.yaml":  "resources: []\n",
		"envs/prod/kustomization.yaml": "resources: []\n",
		"envs/old/kustomization.yaml":  "resources: []\n",
		"teams/web.yaml":               "team: {name: web, namespace: web-ns}\n",
	}}, "1.0.0")
	e := start(t, func(o *applicationset.Options) {
		c, err := kube.NewClient(testCluster.Config)
		if err != nil {
			t.Fatal(err)
		}
		o.Git = repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second, OCIPlainHTTP: true,
			Credentials: &settings.RepoCredentials{Reader: c, Namespace: o.Namespace}})
	})
	ctx := context.Background()
	if err := e.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "envs-repo", Namespace: e.ns,
		Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository"}},
		StringData: map[string]string{"type": "oci", "url": repoURL, "username": reg.Username, "password": reg.Password}}); err != nil {
		t.Fatal(err)
	}
	tmpl := func(name, path string) v1alpha1.ApplicationSetTemplate {
		return v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: name},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: path, TargetRevision: "1.0.0"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"}},
		}
	}
	for _, as := range []*v1alpha1.ApplicationSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "oci-dirs", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				OCI: &v1alpha1.OCIGenerator{RepoURL: repoURL, Revision: "1.x",
					Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "envs/*"}, {Path: "envs/old", Exclude: true}}}}}},
			Template: tmpl("env-{{path.basename}}", "{{path}}")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "oci-files", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				OCI: &v1alpha1.OCIGenerator{RepoURL: repoURL, Revision: "1.0.0", Files: []v1alpha1.GitFileGeneratorItem{{Path: "teams/*.yaml"}}}}}},
			Template: tmpl("team-{{team.name}}", "{{path}}")}},
	} {
		if err := e.client.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	apps := e.waitApps("env-dev", "env-prod", "team-web")
	if p := apps["env-prod"].Spec.Source.Path; p != "envs/prod" {
		t.Errorf("directory path = %s", p)
	}
	if p := apps["team-web"].Spec.Source.Path; p != "teams" {
		t.Errorf("file path = %s", p)
	}
}
