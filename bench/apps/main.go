// Command apps measures the controller at scale: N Applications, each one
// ConfigMap from one monorepo, on a local cluster. It reports the time from
// creating them until all are Synced, the same after a commit that changes
// every app (found by the controller's repository poll), the
// controller's peak memory and the API requests it made.
//
//	go run ./bench/apps -n 1000
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

func main() {
	n := flag.Int("n", 1000, "number of Applications")
	workers := flag.Int("workers", 20, "controller workers (--status-processors)")
	opWorkers := flag.Int("operation-workers", 10, "concurrent syncs (--operation-processors)")
	floorOnly := flag.Bool("floor", false, "measure the API server alone: create the apps, then make the writes any controller must (apply, status, event) with no controller running")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long per phase")
	cpuProfile := flag.String("cpuprofile", "", "write the process's CPU profile (controller and repo server in-process) to this file")
	blockProfile := flag.String("blockprofile", "", "write the process's blocking profile to this file")
	flag.Parse()
	stop, err := profile(*cpuProfile, *blockProfile)
	if err == nil {
		err = run(*n, *workers, *opWorkers, *timeout, *floorOnly)
		if stopErr := stop(); err == nil {
			err = stopErr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// profile starts the profiles asked for; stop writes them.
func profile(cpuPath, blockPath string) (stop func() error, err error) {
	var cpu *os.File
	if cpuPath != "" {
		if cpu, err = os.Create(cpuPath); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			return nil, err
		}
	}
	if blockPath != "" {
		runtime.SetBlockProfileRate(int(time.Millisecond)) // blocking events of a millisecond or more
	}
	return func() error {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				return err
			}
		}
		if blockPath == "" {
			return nil
		}
		f, err := os.Create(blockPath)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("block").WriteTo(f, 0); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	}, nil
}

// countingTransport counts requests to the API server, in total and by
// verb and resource.
type countingTransport struct {
	next  http.RoundTripper
	count *atomic.Int64
	mu    *sync.Mutex
	by    map[string]int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.count.Add(1)
	c.mu.Lock()
	c.by[requestKind(r)]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// requestKind names a request by verb and resource: "PATCH configmaps",
// "PATCH applications/status", "PATCH configmaps (dry run)".
func requestKind(r *http.Request) string {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	res := r.URL.Path
	for i, s := range segs {
		if s == "namespaces" && i+2 < len(segs) {
			res = segs[i+2]
			if i+4 < len(segs) {
				res += "/" + segs[i+4]
			}
			break
		}
	}
	kind := r.Method + " " + res
	if r.URL.Query().Get("watch") == "true" {
		kind += " (watch)"
	}
	if r.URL.Query().Has("dryRun") {
		kind += " (dry run)"
	}
	return kind
}

// printRequests prints the requests counted since the last call, most first.
func printRequests(by map[string]int64, mu *sync.Mutex, n int) {
	mu.Lock()
	defer mu.Unlock()
	type kv struct {
		k string
		v int64
	}
	var list []kv
	for k, v := range by {
		list = append(list, kv{k, v})
		delete(by, k)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].v > list[j].v })
	for _, e := range list {
		fmt.Printf("  %8d  %5.2f/app  %s\n", e.v, float64(e.v)/float64(n), e.k)
	}
}

// repoPoll is how often the controller checks the monorepo for commits, as
// a Git webhook would announce them.
const repoPoll = time.Second

func run(n, workers, opWorkers int, timeout time.Duration, floorOnly bool) error {
	ctx := context.Background()
	cl, err := localcluster.Start(ctx, localcluster.Options{})
	if err != nil {
		return err
	}
	defer cl.Stop()
	if err := kube.InstallCRDs(ctx, cl.Config); err != nil {
		return err
	}
	// The bench's own client (creating the Applications, as a CI pipeline
	// or an ApplicationSet would) is not what is measured: no client-side
	// rate limit.
	own := rest.CopyConfig(cl.Config)
	own.QPS, own.Burst = 5000, 10000
	c, err := kube.NewClient(own)
	if err != nil {
		return err
	}
	for _, ns := range []string{"argocd", "apps"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	dir, err := os.MkdirTemp("", "capstan-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	repoURL, err := monorepo(dir, n, "one")
	if err != nil {
		return err
	}

	if floorOnly {
		return floor(ctx, c, own, n, repoURL)
	}

	var requests atomic.Int64
	var mu sync.Mutex
	by := map[string]int64{}
	cfg := rest.CopyConfig(cl.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, count: &requests, mu: &mu, by: by}
	})
	ctrlCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_ = controller.Run(ctrlCtx, controller.Options{
			Config: cfg, Namespace: "argocd", Workers: workers, OperationWorkers: opWorkers, Resync: 10 * time.Minute, RepoPoll: repoPoll,
			Renderer: repo.NewService(repo.Options{Root: filepath.Join(dir, "repos")}),
			Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
		})
	}()

	apps, err := ctrlcache.New(own, ctrlcache.Options{
		Scheme: c.Scheme(), DefaultNamespaces: map[string]ctrlcache.Config{"argocd": {}},
		DefaultTransform: slimApplication, // this process's RSS is the controller's, not the bench's
	})
	if err != nil {
		return err
	}
	if _, err := apps.GetInformer(ctx, &v1alpha1.Application{}); err != nil {
		return err
	}
	go func() { _ = apps.Start(ctrlCtx) }()
	if !apps.WaitForCacheSync(ctx) {
		return fmt.Errorf("the Applications cache did not sync")
	}

	start := time.Now()
	if err := createApps(ctx, c, n, repoURL); err != nil {
		return err
	}
	created := time.Since(start)
	if err := waitSynced(ctx, apps, n, "", timeout); err != nil {
		return err
	}
	first, firstRequests := time.Since(start), requests.Load()
	fmt.Printf("apps=%d workers=%d operation-workers=%d\n", n, workers, opWorkers)
	fmt.Printf("create: %d Applications created in %s\n", n, created.Round(time.Millisecond))
	fmt.Printf("initial sync: all Synced %s after the first was created; %d API requests (%.1f per app)\n",
		first.Round(time.Millisecond), firstRequests, float64(firstRequests)/float64(n))
	printRequests(by, &mu, n)

	// A commit that changes every app, found by the controller's
	// repository poll (one ls-remote for all apps), until every app is
	// Synced at the new revision.
	start = time.Now()
	newRev, err := commitAll(dir, n, "two")
	if err != nil {
		return err
	}
	if err := waitSynced(ctx, apps, n, newRev, timeout); err != nil {
		return err
	}
	fmt.Printf("change: all Synced at the new commit %s after the commit (repository polled every %s); %d API requests (%.1f per app)\n",
		time.Since(start).Round(time.Millisecond), repoPoll, requests.Load()-firstRequests, float64(requests.Load()-firstRequests)/float64(n))
	printRequests(by, &mu, n)
	fmt.Printf("memory: peak RSS of this process (controller and repo server in-process) %d MiB\n", peakRSS()/1024)
	return nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// monorepo creates a bare repository with one directory per app and returns its URL.
func monorepo(dir string, n int, value string) (string, error) {
	bare := filepath.Join(dir, "monorepo.git")
	if _, err := git(dir, "init", "-q", "--bare", "-b", "main", bare); err != nil {
		return "", err
	}
	if _, err := git(dir, "clone", "-q", bare, filepath.Join(dir, "work")); err != nil {
		return "", err
	}
	if _, err := commitAll(dir, n, value); err != nil {
		return "", err
	}
	return "file://" + bare, nil
}

func commitAll(dir string, n int, value string) (string, error) {
	work := filepath.Join(dir, "work")
	for i := range n {
		app := filepath.Join(work, "apps", fmt.Sprintf("app-%05d", i))
		if err := os.MkdirAll(app, 0o755); err != nil {
			return "", err
		}
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-%05d\ndata:\n  value: %s\n", i, value)
		if err := os.WriteFile(filepath.Join(app, "cm.yaml"), []byte(cm), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", value}, {"push", "-q", "origin", "HEAD:main"}} {
		if _, err := git(work, args...); err != nil {
			return "", err
		}
	}
	return git(work, "rev-parse", "HEAD")
}

func parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

func createApps(ctx context.Context, c client.Client, n int, repoURL string) error {
	return parallel(n, func(i int) error { return c.Create(ctx, newApp(i, repoURL)) })
}

// newApp is the i-th Application: automated, one ConfigMap from the monorepo.
func newApp(i int, repoURL string) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d", i), Namespace: "argocd"},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: fmt.Sprintf("apps/app-%05d", i), TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "apps"},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
		},
	}
}

// waitSynced polls until n Applications are Synced (at revision, if set).
// It reads a watch-fed cache: listing thousands of Applications from the API
// server every poll would load it more than the controller does.
func waitSynced(ctx context.Context, c client.Reader, n int, revision string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var list v1alpha1.ApplicationList
		if err := c.List(ctx, &list, client.InNamespace("argocd"), client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		done := 0
		for _, a := range list.Items {
			if a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && (revision == "" || a.Status.Sync.Revision == revision) &&
				a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded &&
				(revision == "" || a.Status.OperationState.SyncResult.Revision == revision) {
				done++
			}
		}
		if done == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Applications Synced after %s", done, n, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// floor times, with no controller, what the API server needs for the
// writes any controller must make for n one-ConfigMap apps: creating the
// Applications, then for each an apply of its ConfigMap, a status write
// like Capstan's and an Event, 20 at a time.
func floor(ctx context.Context, c client.Client, cfg *rest.Config, n int, repoURL string) error {
	start := time.Now()
	if err := createApps(ctx, c, n, repoURL); err != nil {
		return err
	}
	created := time.Since(start)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	writes := time.Now()
	err = parallel(n, func(i int) error {
		name := fmt.Sprintf("app-%05d", i)
		cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"apps","annotations":{%q:%q}},"data":{"value":"one"}}`,
			name, v1alpha1.AnnotationTrackingID, name+":/ConfigMap:apps/"+name)
		force := true
		if _, err := kube.CoreV1().ConfigMaps("apps").Patch(ctx, name, types.ApplyPatchType, []byte(cm), metav1.PatchOptions{FieldManager: "capstan", Force: &force}); err != nil {
			return err
		}
		app := newApp(i, repoURL) // as created: a merge patch needs no read
		orig := app.DeepCopy()
		now := metav1.Now()
		res := v1alpha1.ResourceStatus{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name, Status: v1alpha1.SyncStatusCodeSynced}
		app.Status = v1alpha1.ApplicationStatus{
			Resources: []v1alpha1.ResourceStatus{res}, ReconciledAt: &now, SourceType: v1alpha1.SourceTypeDirectory,
			Sync:   v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: strings.Repeat("a", 40), ComparedTo: v1alpha1.ComparedTo{Source: *app.Spec.Source, Destination: app.Spec.Destination}},
			Health: v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusHealthy, LastTransitionTime: &now},
			OperationState: &v1alpha1.OperationState{Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: strings.Repeat("a", 40)}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}},
				Phase: v1alpha1.OperationSucceeded, Message: "successfully synced (all tasks run)", StartedAt: now, FinishedAt: &now,
				SyncResult: &v1alpha1.SyncOperationResult{Revision: strings.Repeat("a", 40), Source: *app.Spec.Source,
					Resources: []*v1alpha1.ResourceResult{{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name, Status: v1alpha1.ResultCodeSynced, Message: "applied", SyncPhase: v1alpha1.SyncPhaseSync}}}},
			History: []v1alpha1.RevisionHistory{{ID: 0, Revision: strings.Repeat("a", 40), Source: *app.Spec.Source, DeployedAt: now, DeployStartedAt: &now, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}},
		}
		if err := c.Patch(ctx, app, client.MergeFrom(orig)); err != nil {
			return err
		}
		_, err := kube.EventsV1().Events("argocd").Create(ctx, &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}, EventTime: metav1.NewMicroTime(time.Now()),
			ReportingController: "bench", ReportingInstance: "bench", Action: "Sync", Reason: "OperationCompleted", Type: corev1.EventTypeNormal,
			Regarding: corev1.ObjectReference{Kind: "Application", Namespace: "argocd", Name: name}, Note: "Automated sync operation succeeded",
		}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Printf("apps=%d, API server alone (no controller)\n", n)
	fmt.Printf("create: %d Applications created in %s\n", n, created.Round(time.Millisecond))
	fmt.Printf("writes: %d ConfigMap applies, status writes and Events in %s (%s including the creation)\n",
		n, time.Since(writes).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return nil
}

// slimApplication keeps only what waitSynced reads of an Application.
func slimApplication(obj any) (any, error) {
	a, ok := obj.(*v1alpha1.Application)
	if !ok {
		return obj, nil
	}
	slim := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.Name, Namespace: a.Namespace, ResourceVersion: a.ResourceVersion}}
	slim.Status.Sync = v1alpha1.SyncStatus{Status: a.Status.Sync.Status, Revision: a.Status.Sync.Revision}
	if st := a.Status.OperationState; st != nil {
		slim.Status.OperationState = &v1alpha1.OperationState{Phase: st.Phase}
		if st.SyncResult != nil {
			slim.Status.OperationState.SyncResult = &v1alpha1.SyncOperationResult{Revision: st.SyncResult.Revision}
		}
	}
	return slim, nil
}

// peakRSS is VmHWM from /proc/self/status, in KiB.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}
