package main

import (
	"context"
	"math"
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
		r                 ratios
		ratios, overCount int
	}{
		{"within", figures{apps: 10, initialRequests: 40, changeRequests: 50}, ratios{1.1, 1.2, 3}, 0, 0},
		{"slow after a commit", figures{apps: 10, initialRequests: 40, changeRequests: 50}, ratios{1.1, 1.3, 3}, 1, 0},
		{"too many requests", figures{apps: 10, initialRequests: 41, changeRequests: 51}, ratios{0.5, 0.5, 3}, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := tg.ratiosExceeded(c.r); len(got) != c.ratios {
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

// TestMedianRatios: one round spoiled by the machine's noise, on either
// side, moves the verdict no more than the other rounds allow.
func TestMedianRatios(t *testing.T) {
	mk := func(floor, initial, change time.Duration) round {
		return round{floor: floor * time.Second, f: &figures{initial: initial * time.Second, change: change * time.Second}}
	}
	r := medianRatios([]round{mk(10, 11, 12), mk(10, 12, 30), mk(20, 20, 22)})
	if math.Abs(r.initial-1.1) > 1e-9 || math.Abs(r.change-1.2) > 1e-9 || r.rounds != 3 {
		t.Errorf("ratios %+v, want 1.1 and 1.2 of 3 rounds", r)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of an even count %v", m)
	}
	most := mostRequests([]round{{f: &figures{initialRequests: 5, changeRequests: 9}}, {f: &figures{initialRequests: 7, changeRequests: 8}}})
	if most.initialRequests != 7 || most.changeRequests != 9 {
		t.Errorf("most requests %+v", most)
	}
}
