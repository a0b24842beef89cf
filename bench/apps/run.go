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

	"k8s.io/apimachinery/pkg/fields"
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
	memProfile         string        // where to write the heap profile at the end, if set
}

// figures are what a run of the controller measured.
type figures struct {
	apps                            int
	initial, change                 time.Duration
	initialRequests, changeRequests int64
	cpuSeconds                      float64 // of what is measured, both phases
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
	changes := make(chan repo.Change, 1) // what the API server's Git webhook handler sends
	go func() {
		_ = controller.Run(ctrlCtx, controller.Options{
			Config: cfg, Namespace: w.ns, Workers: o.workers, OperationWorkers: o.opWorkers, Resync: 10 * time.Minute, RepoPoll: repoPoll, RepoChanges: changes,
			WriteParallelism: 20, // as `capstan controller` sets it
			Renderer:         repo.NewService(repo.Options{Root: filepath.Join(s.dir, "repos")}),
			Log:              slog.New(slog.NewJSONHandler(io.Discard, nil)),
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
	f, err := phases{site: s, workload: w, apps: apps, n: o.n, timeout: o.timeout, printf: printf,
		requests: func() int64 {
			n := requests.Load()
			printRequests(by, &mu, o.n, o.quiet)
			return n
		},
		cpu: func() float64 { sec, _ := cpuSeconds(os.Getpid()); return sec },
		announce: func(ctx context.Context) (int64, error) {
			select {
			case changes <- repo.Change{URL: s.repoURL}: // a push naming no files: every app is re-checked
				return 0, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		},
	}.run(ctx)
	if err != nil {
		return nil, err
	}
	runtime.GC() // what is live, not what awaits collection
	if err := writeProfile("heap", o.memProfile); err != nil {
		return nil, err
	}
	f.peakRSSMiB = peakRSS() / 1024
	printf("memory: peak RSS of this process (controller and repo server in-process) %d MiB, live heap %.0f MiB\n", f.peakRSSMiB, heapInUse())
	return f, nil
}

// phases is one measurement's two phases: it creates the apps, waits
// until all are Synced, then commits a change to every app and waits until
// all are Synced at the new revision.
type phases struct {
	site     *site
	workload workload
	apps     ctrlcache.Informers // the bench's cache of the Applications
	n        int
	timeout  time.Duration // per phase
	printf   func(string, ...any) (int, error)
	// requests returns the count of API requests so far (and may print
	// their kinds).
	requests func() int64
	// cpu returns the CPU seconds of what is measured so far.
	cpu func() float64
	// announce, if set, tells what is measured of the new commit, as a
	// Git webhook would; without it, the repository poll finds it (one
	// ls-remote for all apps). It returns the API requests it made, which
	// are not counted.
	announce func(ctx context.Context) (int64, error)
}

func (p phases) run(ctx context.Context) (*figures, error) {
	f := &figures{apps: p.n}
	before, cpuBefore := p.requests(), p.cpu()
	cpu := p.site.cpuMeter(p.cpu, p.printf, p.n)
	start := time.Now()
	if err := p.workload.create(ctx, p.site.client, p.n, 16); err != nil {
		return nil, err
	}
	created := time.Since(start)
	if err := waitSynced(ctx, p.apps, p.workload.ns, p.n, "", "", p.timeout); err != nil {
		return nil, err
	}
	f.initial = time.Since(start)
	p.printf("create: %d Applications created in %s\n", p.n, created.Round(time.Millisecond))
	p.printf("initial sync: all Synced %s after the first was created\n", f.initial.Round(time.Millisecond))
	f.initialRequests = p.requests() - before
	p.printf("  %d API requests but Events (%.2f per app)\n", f.initialRequests, perApp(f.initialRequests, p.n))
	cpu()

	start = time.Now()
	newRev, err := commitAll(p.site.dir, p.n, "two")
	if err != nil {
		return nil, err
	}
	found := fmt.Sprintf("repository polled every %s", repoPoll)
	var announced int64
	if p.announce != nil {
		if announced, err = p.announce(ctx); err != nil {
			return nil, err
		}
		found = "announced to every app as a webhook would"
	}
	if err := waitSynced(ctx, p.apps, p.workload.ns, p.n, newRev, "", p.timeout); err != nil {
		return nil, err
	}
	f.change = time.Since(start)
	p.printf("change: all Synced at the new commit %s after the commit (%s)\n", f.change.Round(time.Millisecond), found)
	f.changeRequests = p.requests() - before - f.initialRequests - announced
	p.printf("  %d API requests but Events (%.2f per app)\n", f.changeRequests, perApp(f.changeRequests, p.n))
	cpu()
	f.cpuSeconds = p.cpu() - cpuBefore
	if len(p.site.dests) > 1 {
		return f, p.outage(ctx, f)
	}
	return f, nil
}

// outage stops the first destination cluster, commits a change to every
// app again and waits until the apps of the other clusters are Synced at
// it: one cluster going away must not hold up the others.
func (p phases) outage(ctx context.Context, f *figures) error {
	gone := p.site.dests[0]
	if err := gone.cluster.Stop(); err != nil {
		return err
	}
	start := time.Now()
	newRev, err := commitAll(p.site.dir, p.n, "three")
	if err != nil {
		return err
	}
	if p.announce != nil {
		if _, err := p.announce(ctx); err != nil {
			return err
		}
	}
	rest := p.n - (p.n+len(p.site.dests)-1)/len(p.site.dests)
	if err := waitSynced(ctx, p.apps, p.workload.ns, rest, newRev, gone.server, p.timeout); err != nil {
		return err
	}
	took := time.Since(start)
	p.printf("outage: one of %d clusters stopped, a commit: the %d apps of the others all Synced %s after it (%.2f× the commit with all up)\n",
		len(p.site.dests), rest, took.Round(time.Millisecond), took.Seconds()/f.change.Seconds())
	return nil
}

// appCache is a watch-fed cache of the bench's Applications, slimmed to
// what waitSynced reads: listing thousands of Applications from the API
// server every poll would load it more than the controller does.
func appCache(ctx context.Context, s *site, ns string) (ctrlcache.Cache, error) {
	apps, err := ctrlcache.New(s.own, ctrlcache.Options{
		// One watch restricted by a field selector rather than a namespaced
		// cache: its informer has a store waitSynced reads in place.
		Scheme: s.client.Scheme(), DefaultFieldSelector: fields.OneTermEqualSelector("metadata.namespace", ns),
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
