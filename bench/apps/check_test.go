package main

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestRequestsPerApp runs the controller on 200 apps and holds its API
// requests per app to the committed targets (bench/apps/targets.json),
// which make bench-check also holds the 1,000-app run to. Requests, not
// times: they do not depend on how fast or busy the machine is.
func TestRequestsPerApp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and 200 Applications")
	}
	tg, err := loadTargets("targets.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := controllerRun{n: 200, workers: 20, opWorkers: 10, timeout: 5 * time.Minute, quiet: true}.measure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.2f requests per app after creation, %.2f after a commit", perApp(f.initialRequests, f.apps), perApp(f.changeRequests, f.apps))
	for _, e := range tg.requestsExceeded(f) {
		t.Error(e)
	}
}

func TestTargets(t *testing.T) {
	tg := &targets{Apps: 10, MaxRatioToFloor: 1.2}
	tg.MaxRequestsPerApp.Initial, tg.MaxRequestsPerApp.Change = 4, 5
	for _, c := range []struct {
		name              string
		f                 figures
		floor             time.Duration
		ratios, overCount int
	}{
		{"within", figures{apps: 10, initial: 11 * time.Second, change: 12 * time.Second, initialRequests: 40, changeRequests: 50}, 10 * time.Second, 0, 0},
		{"slow after a commit", figures{apps: 10, initial: 11 * time.Second, change: 13 * time.Second, initialRequests: 40, changeRequests: 50}, 10 * time.Second, 1, 0},
		{"too many requests", figures{apps: 10, initial: 5 * time.Second, change: 5 * time.Second, initialRequests: 41, changeRequests: 51}, 10 * time.Second, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := tg.ratiosExceeded(&c.f, c.floor); len(got) != c.ratios {
				t.Errorf("ratios over: %q, want %d", got, c.ratios)
			}
			if got := tg.requestsExceeded(&c.f); len(got) != c.overCount {
				t.Errorf("requests over: %q, want %d", got, c.overCount)
			}
		})
	}
	if _, err := loadTargets("targets.json"); err != nil {
		t.Errorf("the committed targets: %v", err)
	}
	if !slices.IsSorted(floorConcurrencies) {
		t.Error("floorConcurrencies not in order")
	}
}
