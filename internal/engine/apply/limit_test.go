package apply

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// inFlight counts the writes (PATCH, PUT, POST, DELETE) under way through
// it, slowed so that concurrent ones overlap, and keeps the most seen.
type inFlight struct {
	next      http.RoundTripper
	now, most atomic.Int32
}

func (f *inFlight) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		return f.next.RoundTrip(req)
	}
	n := f.now.Add(1)
	defer f.now.Add(-1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	time.Sleep(50 * time.Millisecond)
	return f.next.RoundTrip(req)
}

// TestLimitBoundsWrites: syncs sharing a Limit of 2 never have more than
// two objects written at once (controller.kubectl.parallelism.limit).
func TestLimitBoundsWrites(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	counter := &inFlight{}
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	a := newApplier(t, &recorder{})
	a.Client = dynamic.NewForConfigOrDie(cfg)
	a.Limit = semaphore.NewWeighted(2)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for app := range 6 {
		var objs strings.Builder
		for i := range 3 {
			fmt.Fprintf(&objs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app%d-cm%d}\n---\n", app, i)
		}
		p, err := NewPlan(parse(t, objs.String()))
		if err != nil {
			t.Fatal(err)
		}
		sync := *a // an Applier per sync, sharing the Limit, as the controller makes them
		wg.Go(func() {
			if res := sync.Run(ctx, &Request{App: fmt.Sprintf("app%d", app), Namespace: ns, Plan: p}); res.Phase != v1alpha1.OperationSucceeded {
				t.Errorf("app%d: %s %s", app, res.Phase, res.Message)
			}
		})
	}
	wg.Wait()
	if most := counter.most.Load(); most > 2 || most == 0 {
		t.Errorf("at most %d writes at once, want 1 or 2", most)
	}
}
