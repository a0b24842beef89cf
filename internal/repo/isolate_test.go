package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/render/kustomize"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// workerEnv makes this test binary a render worker, as `capstan
// repo-render-worker` is one.
const workerEnv = "CAPSTAN_TEST_RENDER_WORKER"

func TestMain(m *testing.M) {
	// A Kustomize build with --enable-helm runs this binary as its helm.
	if kustomize.IsHelmRelay(os.Args[0]) {
		os.Exit(kustomize.RunHelmRelay(os.Args[0], os.Args[1:], os.Stdout, os.Stderr))
	}
	if os.Getenv(workerEnv) == "1" {
		if err := ServeWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// isolated returns a Service rendering in workers made of this test binary.
func isolated(t *testing.T, opts Options, maxMemory int64) *Service {
	t.Helper()
	t.Setenv(workerEnv, "1") // inherited by the workers only: TestMain has run
	opts.Root = t.TempDir()
	opts.Isolation = &Isolation{Command: []string{os.Args[0]}, MaxMemory: maxMemory, Workers: 2}
	return NewService(opts)
}

func TestIsolatedRenderIsTheSame(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"plain/deploy.yaml":       deployment,
		"kust/kustomization.yaml": "namePrefix: k-\nresources: [deploy.yaml]\n",
		"kust/deploy.yaml":        deployment,
		"chart/Chart.yaml":        "apiVersion: v2\nname: chart\nversion: 1.0.0\ndependencies:\n- name: local\n  version: 0.1.0\n  repository: file://../local\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n",
		"local/Chart.yaml":        "apiVersion: v2\nname: local\nversion: 0.1.0\n",
		"local/templates/l.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-local\n",
		"jsonnet/main.jsonnet":    "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: std.extVar('name')}}",
	})
	inProcess := NewService(Options{Root: t.TempDir()})
	workers := isolated(t, Options{}, 512<<20)
	for _, src := range []v1alpha1.ApplicationSource{
		{RepoURL: remote.URL, Path: "plain"},
		{RepoURL: remote.URL, Path: "kust"},
		{RepoURL: remote.URL, Path: "chart"},
		{RepoURL: remote.URL, Path: "jsonnet", Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: v1alpha1.ApplicationSourceJsonnet{ExtVars: []v1alpha1.JsonnetVar{{Name: "name", Value: "$ARGOCD_APP_NAME"}}}}},
	} {
		req := &Request{AppName: "same", Namespace: "ns", Sources: []v1alpha1.ApplicationSource{src}}
		want, err := inProcess.Render(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := workers.Render(context.Background(), req)
		if err != nil {
			t.Fatalf("%s in a worker: %v", src.Path, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: a worker rendered %v, in-process %v", src.Path, names(got.Objects), names(want.Objects))
		}
	}
	if n := workers.workers.seq; n > 2 {
		t.Errorf("%d workers started for four renders, want them reused (at most 2)", n)
	}
}

func TestIsolatedHelmDependenciesAreFetchedByTheService(t *testing.T) {
	// The dependency fetch crosses back to the Service, which holds the
	// repositories' credentials: run the in-process test's chart in workers.
	checkHelmDependenciesFetched(t, func(opts Options) *Service { return isolated(t, opts, 512<<20) })
}

// TestHostileSourcesCannotExhaustTheService renders a chart whose template
// writes gigabytes and one whose output is merely over the size limit; each
// fails with a clear error, this process's heap stays small, and the
// Service keeps rendering.
func TestIsolatedKustomizeHelmCharts(t *testing.T) {
	// The worker serves Kustomize's helm; the chart comes through the
	// Service, which holds the repository's credentials.
	checkKustomizeHelmCharts(t, func(opts Options) *Service { return isolated(t, opts, 512<<20) })
}

func TestHostileSourcesCannotExhaustTheService(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"huge/Chart.yaml":         "apiVersion: v2\nname: huge\nversion: 1.0.0\n",
		"huge/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata:\n  blob: \"{{ range $i := until 200000000 }}xxxxxxxxxx{{ end }}\"\n",
		"large/Chart.yaml":        "apiVersion: v2\nname: large\nversion: 1.0.0\n",
		"large/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: large}\ndata:\n  blob: \"{{ range $i := until 300000 }}xxxxxxxxxx{{ end }}\"\n",
		"fine/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n",
	})
	// The limit leaves room for the race detector's overhead on a legitimate render.
	svc := isolated(t, Options{MaxManifestBytes: 1 << 20}, 512<<20)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	render := func(path string) error {
		_, err := svc.Render(context.Background(), &Request{AppName: path, Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: path}}})
		return err
	}
	if err := render("huge"); !errors.Is(err, ErrRenderLimit) || !strings.Contains(err.Error(), "more than 512 MiB of memory") {
		t.Errorf("a template writing gigabytes: %v", err)
	}
	if err := render("large"); !errors.Is(err, ErrRenderLimit) || !strings.Contains(err.Error(), "over the limit of 1048576") {
		t.Errorf("output over the limit: %v", err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 64<<20 {
		t.Errorf("this process's heap grew by %d MiB", grew>>20)
	}
	if err := render("fine"); err != nil {
		t.Errorf("after the hostile renders: %v", err)
	}
}

// TestWorkerOutlivesItsCallerGivingUp ends each render's context as soon
// as the render returns: the worker that rendered it goes back to the
// pool alive, and the next render reuses it. (The watchdog once saw the
// context end as the render finished and killed the worker in the pool;
// the next render failed with a broken pipe, and the failure was
// remembered for the source.)
func TestWorkerOutlivesItsCallerGivingUp(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	rev := remote.Commit(t, "c", map[string]string{"plain/deploy.yaml": deployment})
	s := isolated(t, Options{}, 512<<20)
	dir, err := s.git.Repo(remote.URL, git.Creds{}).Checkout(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	in := &sourceInput{root: dir, source: v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "plain"}, req: &Request{AppName: "a", Namespace: "ns"}}
	// One thread: the watchdog runs only once the render's caller has
	// gone on, as on a busy machine.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		_, _, err := s.workers.render(ctx, in)
		cancel()
		if err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
		time.Sleep(time.Millisecond) // the watchdog's turn
	}
	if n := s.workers.seq; n > 1 {
		t.Errorf("%d workers started for 40 renders one after the other, want one kept alive", n)
	}
}

// TestPlainDirectoriesRenderInProcess renders with isolation on: a
// directory of plain manifests is parsed in-process and starts no worker;
// a directory holding a Jsonnet program, and a chart, render in a worker.
func TestPlainDirectoriesRenderInProcess(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"plain/deploy.yaml":        deployment,
		"plain/nested/ignored.txt": "not a manifest",
		"mixed/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n",
		"mixed/sub/main.jsonnet":   "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'from-jsonnet'}}",
		"chart/Chart.yaml":         "apiVersion: v2\nname: chart\nversion: 1.0.0\n",
		"chart/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
	})
	s := isolated(t, Options{}, 512<<20)
	for _, c := range []struct {
		name    string
		source  v1alpha1.ApplicationSource
		workers int // started so far
	}{
		{"plain manifests", v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "plain"}, 0},
		{"Jsonnet not read without recurse", v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "mixed"}, 0},
		{"a Jsonnet program", v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "mixed", Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true}}, 1},
		{"a chart", v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "chart"}, 1},
	} {
		if _, err := s.Render(context.Background(), &Request{AppName: "a", Sources: []v1alpha1.ApplicationSource{c.source}}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.workers.seq != c.workers {
			t.Errorf("%s: %d workers started, want %d", c.name, s.workers.seq, c.workers)
		}
	}
}
