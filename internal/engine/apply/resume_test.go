package apply

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

const hookedApp = `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: migrate:1.0}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config}
`

// store stands for the Application's status: what the checkpoints of a
// run persisted, until the process "dies".
type store struct {
	saved  []*v1alpha1.ResourceResult
	forced int
	// dead makes every later write fail, as a killed controller's would.
	dead bool
}

func (s *store) checkpoint(_ context.Context, res *Result, force bool) error {
	if s.dead {
		return errors.New("controller is gone")
	}
	if force {
		s.forced++
	}
	s.saved = nil
	for _, rr := range res.Resources {
		s.saved = append(s.saved, rr.DeepCopy())
	}
	return nil
}

// TestResumedSyncRunsEachHookOnce kills a hooked sync at each point that
// matters for its hook (recorded but not created; created and complete
// but not recorded; recorded complete), runs it again from what was
// recorded, and counts how often the hook Job was created: once.
func TestResumedSyncRunsEachHookOnce(t *testing.T) {
	localcluster.Need(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	for _, tc := range []struct {
		name string
		// killAt says, for each step of the first run, whether to die there.
		killAt func(s *store, action string, task *Task) bool
	}{
		{"recorded, not created", func(s *store, action string, task *Task) bool {
			return action == "apply" && task.Hook
		}},
		{"complete, not recorded", func(s *store, action string, task *Task) bool {
			return action == "healthy" && task.Hook
		}},
		{"recorded complete", func(s *store, action string, task *Task) bool {
			return action == "apply" && !task.Hook
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.NewNamespace(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			w, err := cs.BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			s := &store{}
			runCtx, kill := context.WithCancel(ctx)
			first := newApplier(t, &recorder{})
			first.Progress = func(e Event) {
				if !s.dead && tc.killAt(s, string(e.Action), e.Task) {
					s.dead = true
					kill()
				}
			}
			res := first.Run(runCtx, &Request{App: "hooked", Namespace: ns, Plan: plan(t, hookedApp), Checkpoint: s.checkpoint})
			if !res.Interrupted {
				t.Fatalf("first run: %s %s, want interrupted", res.Phase, res.Message)
			}

			s.dead = false
			res = newApplier(t, &recorder{}).Run(ctx, &Request{App: "hooked", Namespace: ns, Plan: plan(t, hookedApp), Done: s.saved, Checkpoint: s.checkpoint})
			if res.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("resumed run: %s %s", res.Phase, res.Message)
			}
			if got := countAdded(t, w); got != 1 {
				t.Errorf("the hook Job was created %d times, want once", got)
			}
			for _, rr := range res.Resources {
				if rr.HookType != "" && rr.HookPhase != v1alpha1.OperationSucceeded {
					t.Errorf("hook result %s/%s: %s", rr.Kind, rr.Name, rr.HookPhase)
				}
			}
		})
	}
}

func plan(t *testing.T, y string) *Plan {
	t.Helper()
	p, err := NewPlan(parse(t, y))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// countAdded counts the ADDED events a watch has delivered so far.
func countAdded(t *testing.T, w watch.Interface) int {
	t.Helper()
	n := 0
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return n
			}
			if ev.Type == watch.Added {
				n++
			}
		case <-time.After(500 * time.Millisecond):
			return n
		}
	}
}

func Example_resume() {
	// A sync cut short resumes from what its checkpoints recorded: a hook
	// recorded as completed is not run again.
	done := []*v1alpha1.ResourceResult{{Group: "batch", Kind: "Job", Namespace: "shop", Name: "migrate",
		SyncPhase: v1alpha1.SyncPhasePreSync, HookType: v1alpha1.HookTypePreSync, HookPhase: v1alpha1.OperationSucceeded}}
	req := &Request{Done: done}
	fmt.Println(req.done(&v1alpha1.ResourceResult{Group: "batch", Kind: "Job", Namespace: "shop", Name: "migrate", SyncPhase: v1alpha1.SyncPhasePreSync}).HookPhase)
	// Output: Succeeded
}
