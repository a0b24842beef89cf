package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
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

// ratiosExceeded lists the phases whose ratio to the floor is above the
// target.
func (t *targets) ratiosExceeded(r ratios) []string {
	var out []string
	for _, phase := range []struct {
		name  string
		ratio float64
	}{{"after creation", r.initial}, {"after a commit", r.change}} {
		if phase.ratio > t.MaxRatioToFloor {
			out = append(out, fmt.Sprintf("all Synced %s in %.2f× the floor's time (the median of %d rounds), more than %.2f×",
				phase.name, phase.ratio, r.rounds, t.MaxRatioToFloor))
		}
	}
	return out
}

// checkRounds is how often the check measures the floor and then the
// controller, each on a fresh cluster. Each round's ratio compares two
// runs made seconds apart, under the same load from the rest of the
// machine, and the median of the rounds' ratios is held to the target: a
// spell of noise spoils one round, not the verdict.
const checkRounds = 3

// round is one floor measurement and the controller's run right after it.
type round struct {
	floor time.Duration
	f     *figures
}

// ratios are the controller's times to all Synced divided by the floor.
type ratios struct {
	initial, change float64
	rounds          int
}

// medianRatios returns each phase's median ratio over the rounds.
func medianRatios(rs []round) ratios {
	initial, change := make([]float64, len(rs)), make([]float64, len(rs))
	for i, r := range rs {
		initial[i] = r.f.initial.Seconds() / r.floor.Seconds()
		change[i] = r.f.change.Seconds() / r.floor.Seconds()
	}
	return ratios{initial: median(initial), change: median(change), rounds: len(rs)}
}

// median of xs (not empty), the mean of the middle two for an even count.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mostRequests keeps, of all rounds, the highest request counts: those do
// not depend on the machine.
func mostRequests(rs []round) *figures {
	out := *rs[0].f
	for _, r := range rs[1:] {
		out.initialRequests = max(out.initialRequests, r.f.initialRequests)
		out.changeRequests = max(out.changeRequests, r.f.changeRequests)
	}
	return &out
}

// runCheck measures checkRounds rounds of the floor and then the
// controller, then the floor with a controller's watches for reference,
// and fails when the median ratios or the request counts exceed the
// targets. The first round's floor tries every concurrency; the later
// ones use the best of those.
func runCheck(ctx context.Context, path string, o controllerRun) error {
	t, err := loadTargets(path)
	if err != nil {
		return err
	}
	o.n = t.Apps
	var rounds []round
	var concurrencies []int
	for i := range checkRounds {
		fmt.Printf("== round %d of %d\n", i+1, checkRounds)
		floor, at, err := measureFloor(ctx, t.Apps, concurrencies...)
		if err != nil {
			return err
		}
		concurrencies = []int{at}
		f, err := o.measure(ctx)
		if err != nil {
			return err
		}
		rounds = append(rounds, round{floor: floor, f: f})
		fmt.Printf("round %d: floor %s; controller %s after creation (%.2f×), %s after a commit (%.2f×)\n", i+1,
			floor.Round(time.Millisecond), f.initial.Round(time.Millisecond), f.initial.Seconds()/floor.Seconds(),
			f.change.Round(time.Millisecond), f.change.Seconds()/floor.Seconds())
	}
	// The same writes with the watches any controller holds open: not the
	// target's floor, but what tells the watches' share from the controller's.
	floorWatches = true
	watched, _, err := measureFloor(ctx, t.Apps, concurrencies...)
	floorWatches = false
	if err != nil {
		return err
	}
	r, f := medianRatios(rounds), mostRequests(rounds)
	fmt.Printf("check: median of %d rounds: after creation %.2f× the floor, %.2f requests per app; after a commit %.2f× the floor, %.2f requests per app\n",
		r.rounds, r.initial, perApp(f.initialRequests, f.apps), r.change, perApp(f.changeRequests, f.apps))
	last := rounds[len(rounds)-1]
	fmt.Printf("check: the last round against the floor with a controller's watches (%s): %.2f× after creation, %.2f× after a commit\n",
		watched.Round(time.Millisecond), last.f.initial.Seconds()/watched.Seconds(), last.f.change.Seconds()/watched.Seconds())
	if failed := append(t.ratiosExceeded(r), t.requestsExceeded(f)...); len(failed) > 0 {
		return fmt.Errorf("over the targets of %s:\n  %s", path, strings.Join(failed, "\n  "))
	}
	fmt.Println("check: within the targets of", path)
	return nil
}
