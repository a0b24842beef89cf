package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// targets are the committed limits make bench-check holds the controller
// to: a ratio to the API server's floor measured in the same run, and
// requests per app, so a noisy or slow machine cannot pass a regression
// nor fail a good change.
type targets struct {
	// Apps is how many Applications the check creates.
	Apps int `json:"apps"`
	// MaxRatioToFloor bounds the time to all Synced, after creation and
	// after a commit touching every app, divided by the floor's time.
	MaxRatioToFloor float64 `json:"maxRatioToFloor"`
	// MaxRequestsPerApp bounds the controller's API requests per app
	// but Events (best-effort, dropped in bursts), after creation and
	// after a commit. make test checks these on a smaller run.
	MaxRequestsPerApp struct {
		Initial float64 `json:"initial"`
		Change  float64 `json:"change"`
	} `json:"maxRequestsPerApp"`
}

func loadTargets(path string) (*targets, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t := &targets{}
	if err := json.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if t.Apps <= 0 || t.MaxRatioToFloor <= 0 || t.MaxRequestsPerApp.Initial <= 0 || t.MaxRequestsPerApp.Change <= 0 {
		return nil, fmt.Errorf("%s: apps, maxRatioToFloor and maxRequestsPerApp must all be set", path)
	}
	return t, nil
}

// requestsExceeded lists the request counts of f above the targets.
func (t *targets) requestsExceeded(f *figures) []string {
	var out []string
	if got := perApp(f.initialRequests, f.apps); got > t.MaxRequestsPerApp.Initial {
		out = append(out, fmt.Sprintf("%.2f requests per app after creation, more than %.2f", got, t.MaxRequestsPerApp.Initial))
	}
	if got := perApp(f.changeRequests, f.apps); got > t.MaxRequestsPerApp.Change {
		out = append(out, fmt.Sprintf("%.2f requests per app after a commit, more than %.2f", got, t.MaxRequestsPerApp.Change))
	}
	return out
}

// ratiosExceeded lists the times of f whose ratio to floor is above the
// target.
func (t *targets) ratiosExceeded(f *figures, floor time.Duration) []string {
	var out []string
	for _, phase := range []struct {
		name string
		took time.Duration
	}{{"after creation", f.initial}, {"after a commit", f.change}} {
		if r := phase.took.Seconds() / floor.Seconds(); r > t.MaxRatioToFloor {
			out = append(out, fmt.Sprintf("all Synced %s %s, %.2f× the floor's %s, more than %.2f×",
				phase.name, phase.took.Round(time.Millisecond), r, floor.Round(time.Millisecond), t.MaxRatioToFloor))
		}
	}
	return out
}

// controllerTries is how often the check measures the controller, each on
// a fresh cluster, keeping its best times, as the floor keeps the best of
// its tries: the same odds against the machine's noise on both sides.
const controllerTries = 2

// best keeps the shorter time of each phase of f and g, and the higher
// request counts (those do not depend on the machine). f may be nil.
func (f *figures) best(g *figures) *figures {
	if f == nil {
		return g
	}
	out := *f
	out.initial, out.change = min(f.initial, g.initial), min(f.change, g.change)
	out.initialRequests, out.changeRequests = max(f.initialRequests, g.initialRequests), max(f.changeRequests, g.changeRequests)
	return &out
}

// runCheck measures the floor, then the controller twice, each on a fresh
// cluster, and fails when the controller exceeds the targets.
func runCheck(ctx context.Context, path string, o controllerRun) error {
	t, err := loadTargets(path)
	if err != nil {
		return err
	}
	floor, err := measureFloor(ctx, t.Apps)
	if err != nil {
		return err
	}
	// The same writes with the watches any controller holds open: not the
	// target's floor, but what tells the watches' share from the controller's.
	floorWatches = true
	watched, err := measureFloor(ctx, t.Apps)
	floorWatches = false
	if err != nil {
		return err
	}
	o.n = t.Apps
	var f *figures
	for range controllerTries {
		tried, err := o.measure(ctx)
		if err != nil {
			return err
		}
		f = f.best(tried)
	}
	fmt.Printf("check: after creation %.2f× the floor, %.2f requests per app; after a commit %.2f× the floor, %.2f requests per app\n",
		f.initial.Seconds()/floor.Seconds(), perApp(f.initialRequests, f.apps), f.change.Seconds()/floor.Seconds(), perApp(f.changeRequests, f.apps))
	fmt.Printf("check: against the floor with a controller's watches (%s): %.2f× after creation, %.2f× after a commit\n",
		watched.Round(time.Millisecond), f.initial.Seconds()/watched.Seconds(), f.change.Seconds()/watched.Seconds())
	if failed := append(t.ratiosExceeded(f, floor), t.requestsExceeded(f)...); len(failed) > 0 {
		return fmt.Errorf("over the targets of %s:\n  %s", path, strings.Join(failed, "\n  "))
	}
	fmt.Println("check: within the targets of", path)
	return nil
}
