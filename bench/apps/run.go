package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

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
	s, err := newSite(ctx, o.n)
	if err != nil {
		return nil, err
	}
	defer s.close()
	w := workload{ns: "argocd", dest: "apps", repoURL: s.repoURL}
	if err := s.namespaces(ctx, w.ns, w.dest); err != nil {
		return nil, err
	}
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

	apps, err := ctrlcache.New(s.own, ctrlcache.Options{
		Scheme: s.client.Scheme(), DefaultNamespaces: map[string]ctrlcache.Config{w.ns: {}},
		DefaultTransform: slimApplication, // this process's RSS is the controller's, not the bench's
	})
	if err != nil {
		return nil, err
	}
	if _, err := apps.GetInformer(ctx, &v1alpha1.Application{}); err != nil {
		return nil, err
	}
	go func() { _ = apps.Start(ctrlCtx) }()
	if !apps.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the Applications cache did not sync")
	}
	printf := fmt.Printf
	if o.quiet {
		printf = func(string, ...any) (int, error) { return 0, nil }
	}

	f := &figures{apps: o.n}
	start := time.Now()
	if err := w.create(ctx, s.client, o.n, 16); err != nil {
		return nil, err
	}
	created := time.Since(start)
	if err := waitSynced(ctx, apps, w.ns, o.n, "", o.timeout); err != nil {
		return nil, err
	}
	f.initial, f.initialRequests = time.Since(start), requests.Load()
	printf("apps=%d workers=%d operation-workers=%d\n", o.n, o.workers, o.opWorkers)
	printf("create: %d Applications created in %s\n", o.n, created.Round(time.Millisecond))
	printf("initial sync: all Synced %s after the first was created; %d API requests (%.1f per app)\n",
		f.initial.Round(time.Millisecond), f.initialRequests, perApp(f.initialRequests, o.n))
	printRequests(by, &mu, o.n, o.quiet)

	// A commit that changes every app, found by the controller's
	// repository poll (one ls-remote for all apps), until every app is
	// Synced at the new revision.
	start = time.Now()
	newRev, err := commitAll(s.dir, o.n, "two")
	if err != nil {
		return nil, err
	}
	if err := waitSynced(ctx, apps, w.ns, o.n, newRev, o.timeout); err != nil {
		return nil, err
	}
	f.change, f.changeRequests = time.Since(start), requests.Load()-f.initialRequests
	f.peakRSSMiB = peakRSS() / 1024
	printf("change: all Synced at the new commit %s after the commit (repository polled every %s); %d API requests (%.1f per app)\n",
		f.change.Round(time.Millisecond), repoPoll, f.changeRequests, perApp(f.changeRequests, o.n))
	printRequests(by, &mu, o.n, o.quiet)
	printf("memory: peak RSS of this process (controller and repo server in-process) %d MiB\n", f.peakRSSMiB)
	return f, nil
}
