// Command apps measures the controller at scale: N Applications, each one
// ConfigMap from one monorepo, on a local cluster. It reports the time from
// creating them until all are Synced, the same after a commit that changes
// every app (found by the controller's repository poll), the
// controller's peak memory and the API requests it made.
//
//	go run ./bench/apps -n 1000         # the controller
//	go run ./bench/apps -n 1000 -floor  # the API server alone
//	go run ./bench/apps -n 1000 -process [-- capstan run's flags]
//	go run ./bench/apps -check bench/apps/targets.json
//	go run ./bench/apps -n 1000 -argocd bin/argocd/argocd  # floor, capstan run, Argo CD side by side
//
// -check (make bench-check) measures the floor and the controller one
// after the other and fails when the controller's time exceeds the
// committed ratio to the floor, or its requests per app the committed
// counts: ratios and counts, never absolute times.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func main() {
	var opts controllerRun
	flag.IntVar(&opts.n, "n", 1000, "number of Applications")
	flag.IntVar(&opts.workers, "workers", 20, "controller workers (--status-processors)")
	flag.IntVar(&opts.opWorkers, "operation-workers", 10, "concurrent syncs (--operation-processors)")
	flag.DurationVar(&opts.timeout, "timeout", 10*time.Minute, "give up after this long per phase")
	flag.BoolVar(&floorWatches, "floor-watches", false, "the floor also opens the watches a controller holds (every ConfigMap, the Applications once more), dropping their events")
	floorOnly := flag.Bool("floor", false, "measure the API server alone: create the apps, then make the writes any controller must (apply, status, event) with no controller running")
	process := flag.Bool("process", false, "measure `capstan run` as a user starts it, as a process of its own (built from ./cmd/capstan; run from the module's root), instead of the controller in this process")
	argocd := flag.String("argocd", "", "Argo CD's binary (make argocd): measure the floor, `capstan run` and Argo CD's application controller and repo server one after the other, and print them side by side")
	check := flag.String("check", "", "measure the floor and the controller, and fail when they exceed the targets in this file")
	cpuProfile := flag.String("cpuprofile", "", "write the process's CPU profile (controller and repo server in-process) to this file")
	blockProfile := flag.String("blockprofile", "", "write the process's blocking profile to this file")
	flag.StringVar(&apiServerProfile, "apiserver-cpuprofile", "", "write each local cluster's API server CPU profile, in 10-second parts, to files starting with this")
	flag.IntVar(&destClusters, "clusters", 0, "spread the apps over this many destination clusters, each a local API server of its own, and stop one for a last phase (default: the control cluster)")
	var processEnv []string
	flag.Func("process-env", "with -process: KEY=VALUE added to capstan run's environment (only its own: not the cluster's), repeatable", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		processEnv = append(processEnv, v)
		return nil
	})
	flag.StringVar(&opts.memProfile, "memprofile", "", "write the process's heap profile, once all apps are Synced after the commit, to this file")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard()) // the clients' own logs are not what is measured
	ctx := context.Background()
	stop, err := profile(*cpuProfile, *blockProfile)
	if err == nil {
		switch {
		case *check != "":
			err = runCheck(ctx, *check, opts)
		case *argocd != "":
			err = sideBySide(ctx, opts.n, opts.timeout, *argocd)
		case *process:
			_, err = processRun{n: opts.n, timeout: opts.timeout, args: flag.Args(), env: processEnv}.measure(ctx)
		case *floorOnly:
			_, _, err = measureFloor(ctx, opts.n)
		default:
			_, err = opts.measure(ctx)
		}
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
		return writeProfile("block", blockPath)
	}, nil
}

// writeProfile writes the named runtime profile to path, if set.
func writeProfile(name, path string) error {
	if path == "" {
		return nil
	}
	if name == "heap" {
		runtime.GC() // the profile then shows what is live, not what was last marked
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
