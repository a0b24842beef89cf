package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/repo"
)

// repoPoll is how often the controller checks the monorepo for commits, as
// a Git webhook would announce them.
const repoPoll = time.Second

// controllerRun is one measurement of the controller.
type controllerRun struct {
	n                  int
	workers, opWorkers int
	timeout            time.Duration // per phase
	quiet              bool          // print nothing
	memProfile         string        // where to write the heap profile at the end, if set
}

// figures are what a run of the controller measured.
type figures struct {
	apps                            int
	initial, change                 time.Duration
	initialRequests, changeRequests int64
	peakRSSMiB                      int64
}

func perApp(requests int64, apps int) float64 { return float64(requests) / float64(apps) }

// measure creates the apps with the controller running, waits until all
// are Synced, then commits a change to every app and waits again.
func (o controllerRun) measure(ctx context.Context) (*figures, error) {
	s, w, err := newStandardSite(ctx, o.n)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var requests atomic.Int64
	var mu sync.Mutex
	by := map[string]int64{}
	cfg := rest.CopyConfig(s.cluster.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, count: &requests, mu: &mu, by: by}
	})
	ctrlCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_ = controller.Run(ctrlCtx, controller.Options{
			Config: cfg, Namespace: w.ns, Workers: o.workers, OperationWorkers: o.opWorkers, Resync: 10 * time.Minute, RepoPoll: repoPoll,
			Renderer: repo.NewService(repo.Options{Root: filepath.Join(s.dir, "repos")}),
			Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
		})
	}()

	apps, err := appCache(ctrlCtx, s, w.ns)
	if err != nil {
		return nil, err
	}
	printf := fmt.Printf
	if o.quiet {
		printf = func(string, ...any) (int, error) { return 0, nil }
	}
	printf("apps=%d workers=%d operation-workers=%d\n", o.n, o.workers, o.opWorkers)
	f, err := phases(ctx, s, w, apps, o.n, o.timeout, printf, func() int64 {
		n := requests.Load()
		printRequests(by, &mu, o.n, o.quiet)
		return n
	}, func() float64 { sec, _ := cpuSeconds(os.Getpid()); return sec })
	if err != nil {
		return nil, err
	}
	runtime.GC() // what is live, not what awaits collection
	if err := writeProfile("heap", o.memProfile); err != nil {
		return nil, err
	}
	f.peakRSSMiB = peakRSS() / 1024
	printf("memory: peak RSS of this process (controller and repo server in-process) %d MiB\n", f.peakRSSMiB)
	return f, nil
}

// phases creates the apps, waits until all are Synced, then commits a
// change to every app (found by the repository poll: one ls-remote for
// all apps) and waits until all are Synced at the new revision. requests
// returns the count of API requests so far, and may print their kinds.
//
// systemCPU returns the CPU seconds of what is measured so far.
func phases(ctx context.Context, s *site, w workload, apps client.Reader, n int, timeout time.Duration,
	printf func(string, ...any) (int, error), requests func() int64, systemCPU func() float64) (*figures, error) {
	f := &figures{apps: n}
	before := requests()
	cpu := s.cpuMeter(systemCPU, printf, n)
	start := time.Now()
	if err := w.create(ctx, s.client, n, 16); err != nil {
		return nil, err
	}
	created := time.Since(start)
	if err := waitSynced(ctx, apps, w.ns, n, "", timeout); err != nil {
		return nil, err
	}
	f.initial = time.Since(start)
	printf("create: %d Applications created in %s\n", n, created.Round(time.Millisecond))
	printf("initial sync: all Synced %s after the first was created\n", f.initial.Round(time.Millisecond))
	f.initialRequests = requests() - before
	printf("  %d API requests but Events (%.2f per app)\n", f.initialRequests, perApp(f.initialRequests, n))
	cpu()

	start = time.Now()
	newRev, err := commitAll(s.dir, n, "two")
	if err != nil {
		return nil, err
	}
	if err := waitSynced(ctx, apps, w.ns, n, newRev, timeout); err != nil {
		return nil, err
	}
	f.change = time.Since(start)
	printf("change: all Synced at the new commit %s after the commit (repository polled every %s)\n", f.change.Round(time.Millisecond), repoPoll)
	f.changeRequests = requests() - before - f.initialRequests
	printf("  %d API requests but Events (%.2f per app)\n", f.changeRequests, perApp(f.changeRequests, n))
	cpu()
	return f, nil
}

// appCache is a watch-fed cache of the bench's Applications, slimmed to
// what waitSynced reads: listing thousands of Applications from the API
// server every poll would load it more than the controller does.
func appCache(ctx context.Context, s *site, ns string) (ctrlcache.Cache, error) {
	apps, err := ctrlcache.New(s.own, ctrlcache.Options{
		Scheme: s.client.Scheme(), DefaultNamespaces: map[string]ctrlcache.Config{ns: {}},
		DefaultTransform: slimApplication, // this process's RSS is the controller's, not the bench's
	})
	if err != nil {
		return nil, err
	}
	if _, err := apps.GetInformer(ctx, &v1alpha1.Application{}); err != nil {
		return nil, err
	}
	go func() { _ = apps.Start(ctx) }()
	if !apps.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the Applications cache did not sync")
	}
	return apps, nil
}
