package applicationset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/testing/metricscrape"
)

// syncer stands in for the application controller: it runs each sync
// operation the ApplicationSet controller asks for, reporting the
// Application synced and, unless told otherwise, Healthy.
type syncer struct {
	e        *env
	mu       sync.Mutex
	order    []string
	degraded map[string]bool
}

func (s *syncer) run(ctx context.Context) {
	for ctx.Err() == nil {
		var list v1alpha1.ApplicationList
		if err := s.e.client.List(ctx, &list, client.InNamespace(s.e.ns)); err == nil {
			for i := range list.Items {
				if app := &list.Items[i]; app.Operation != nil {
					s.sync(ctx, app)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond): // polls like a controller's resync; the test's deadlines bound it
		}
	}
}

func (s *syncer) sync(ctx context.Context, app *v1alpha1.Application) {
	s.mu.Lock()
	health := v1alpha1.HealthStatusHealthy
	if s.degraded[app.Name] {
		health = v1alpha1.HealthStatusDegraded
	}
	s.mu.Unlock()
	now := metav1.Now()
	app.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "r1"}
	app.Status.Health = v1alpha1.AppHealthStatus{Status: health}
	app.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationSucceeded, StartedAt: now, FinishedAt: &now}
	app.Status.ReconciledAt = &now
	app.Operation = nil // done (the Application CRD has no status subresource: one write)
	if err := s.e.client.Update(ctx, app); err != nil {
		if !apierrors.IsConflict(err) {
			s.e.t.Errorf("syncing %s: %v", app.Name, err)
		}
		return // a conflict: tried again on the next poll
	}
	s.mu.Lock()
	s.order = append(s.order, app.Name)
	s.mu.Unlock()
}

func (s *syncer) synced() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

func (s *syncer) setHealth(name string, degraded bool) {
	s.mu.Lock()
	s.degraded[name] = degraded
	s.mu.Unlock()
	var app v1alpha1.Application
	if err := s.e.client.Get(context.Background(), client.ObjectKey{Namespace: s.e.ns, Name: name}, &app); err != nil {
		s.e.t.Fatal(err)
	}
	app.Status.Health.Status = v1alpha1.HealthStatusHealthy
	if degraded {
		app.Status.Health.Status = v1alpha1.HealthStatusDegraded
	}
	if err := s.e.client.Update(context.Background(), &app); err != nil {
		s.e.t.Fatal(err)
	}
}

// TestRollingSync: with progressive syncs on, a RollingSync over three
// steps syncs its Applications step by step (at most maxUpdate of a step
// at once), the next step only once the previous one is wholly Healthy; a
// Degraded Application stops the rollout until it is Healthy. Generated
// Applications lose their automated sync, and status records each
// Application's step and state as Argo CD does.
func TestRollingSync(t *testing.T) {
	addr := metricscrape.Addr(t)
	e := start(t, func(o *applicationset.Options) { o.ProgressiveSyncs, o.MetricsAddr = true, addr })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &syncer{e: e, degraded: map[string]bool{"qa-2": true}}
	go s.run(ctx)

	one := intstr.FromInt32(1)
	step := func(env string, maxUpdate *intstr.IntOrString) v1alpha1.ApplicationSetRolloutStep {
		return v1alpha1.ApplicationSetRolloutStep{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{env}}}, MaxUpdate: maxUpdate}
	}
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "waves", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{List: &v1alpha1.ListGenerator{
			Elements: elements(t, map[string]any{"name": "dev-1", "env": "dev"}, map[string]any{"name": "dev-2", "env": "dev"},
				map[string]any{"name": "qa-1", "env": "qa"}, map[string]any{"name": "qa-2", "env": "qa"}, map[string]any{"name": "prod-1", "env": "prod"}),
		}}}},
		Strategy: &v1alpha1.ApplicationSetStrategy{Type: "RollingSync", RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{
			Steps: []v1alpha1.ApplicationSetRolloutStep{step("dev", &one), step("qa", nil), step("prod", nil)}}},
		Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{name}}", Labels: map[string]string{"env": "{{env}}"}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/r", Path: "{{name}}"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{name}}"},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}}},
		},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	apps := e.waitApps("dev-1", "dev-2", "qa-1", "qa-2", "prod-1")
	for name, app := range apps {
		if a := app.Spec.SyncPolicy.Automated; a == nil || a.Enabled == nil || *a.Enabled {
			t.Errorf("%s keeps its automated sync while the rollout drives it: %+v", name, a)
		}
	}
	// Step one, one at a time, then step two; qa-2 is Degraded: the
	// rollout stops there.
	e.eventually("steps one and two synced", func() string {
		got := s.synced()
		if len(got) < 4 {
			return fmt.Sprintf("synced %v", got)
		}
		if !slices.Equal(sorted(got[:2]), []string{"dev-1", "dev-2"}) || !slices.Equal(sorted(got[2:4]), []string{"qa-1", "qa-2"}) {
			t.Fatalf("sync order %v: step two before step one was Healthy", got)
		}
		return ""
	})
	e.eventually("the rollout held at step two", func() string {
		c := e.condition("waves", v1alpha1.ApplicationSetConditionRolloutProgressing)
		statuses := map[string]string{}
		for _, st := range e.appset("waves").Status.ApplicationStatus {
			statuses[st.Application] = st.Step + ":" + st.Status
		}
		want := map[string]string{"dev-1": "1:Healthy", "dev-2": "1:Healthy", "qa-1": "2:Healthy", "qa-2": "2:Progressing", "prod-1": "3:Waiting"}
		if c.Status != v1alpha1.ApplicationSetConditionStatusTrue || c.Message != "ApplicationSet is performing rollout of step 2" || fmt.Sprint(statuses) != fmt.Sprint(want) {
			return fmt.Sprintf("condition %+v, application status %v", c, statuses)
		}
		return ""
	})
	time.Sleep(2 * time.Second) // a period in which prod-1 must not be synced
	if got := s.synced(); slices.Contains(got, "prod-1") {
		t.Fatalf("prod-1 synced while qa-2 is Degraded: %v", got)
	}

	// qa-2 recovers: step three runs and the rollout completes.
	s.setHealth("qa-2", false)
	e.eventually("the rollout completed", func() string {
		c := e.condition("waves", v1alpha1.ApplicationSetConditionRolloutProgressing)
		if c.Status != v1alpha1.ApplicationSetConditionStatusFalse || !slices.Contains(s.synced(), "prod-1") {
			return fmt.Sprintf("condition %+v, synced %v", c, s.synced())
		}
		return ""
	})
	if got := s.synced(); len(got) != 5 {
		t.Errorf("syncs %v: each Application once", got)
	}
	if c := e.condition("waves", v1alpha1.ApplicationSetConditionInvalidRolloutConfig); c.Status != v1alpha1.ApplicationSetConditionStatusFalse {
		t.Errorf("InvalidRolloutConfig %+v", c)
	}
	// Argo CD's progressive sync metrics: the Applications per step and
	// state, the syncs asked per step, how soon after planning.
	labels := fmt.Sprintf(`name="waves",namespace="%s"`, e.ns)
	metricscrape.Until(t, addr,
		`argocd_appset_progressive_sync_app_status{`+labels+`,progressiveStatus="Healthy",step="1"} 2`,
		`argocd_appset_progressive_sync_app_status{`+labels+`,progressiveStatus="Healthy",step="2"} 2`,
		`argocd_appset_progressive_sync_app_status{`+labels+`,progressiveStatus="Healthy",step="3"} 1`,
		`argocd_appset_progressive_sync_syncs_triggered_total{`+labels+`,step="1"} 2`,
		`argocd_appset_progressive_sync_syncs_triggered_total{`+labels+`,step="3"} 1`,
		`argocd_appset_progressive_sync_detection_to_trigger_seconds_count{`+labels+`} `)
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestRollingSyncInvalid: no steps stop the ApplicationSet with an error
// (nothing is created, as every Application would sync at once); an
// unknown operator is an InvalidRolloutConfig condition.
func TestRollingSyncInvalid(t *testing.T) {
	e := start(t, func(o *applicationset.Options) { o.ProgressiveSyncs = true })
	ctx := context.Background()
	set := func(name string, steps []v1alpha1.ApplicationSetRolloutStep) {
		as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{List: &v1alpha1.ListGenerator{
				Elements: elements(t, map[string]any{"name": name + "-a", "env": "dev"})}}}},
			Strategy: &v1alpha1.ApplicationSetStrategy{Type: "RollingSync", RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{Steps: steps}},
			Template: v1alpha1.ApplicationSetTemplate{
				ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{name}}", Labels: map[string]string{"env": "{{env}}"}},
				Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example/r", Path: "x"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"}}},
		}}
		if err := e.client.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	set("nosteps", nil)
	set("badop", []v1alpha1.ApplicationSetRolloutStep{{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "Exists"}}}})
	e.eventually("the conditions", func() string {
		noSteps := e.condition("nosteps", v1alpha1.ApplicationSetConditionErrorOccurred)
		badOp := e.condition("badop", v1alpha1.ApplicationSetConditionInvalidRolloutConfig)
		if noSteps.Message != "No steps defined for rollout" || badOp.Status != v1alpha1.ApplicationSetConditionStatusTrue || !strings.Contains(badOp.Message, `"Exists" is not In or NotIn`) {
			return fmt.Sprintf("nosteps %+v; badop %+v", noSteps, badOp)
		}
		return ""
	})
	if _, made := e.apps()["nosteps-a"]; made {
		t.Error("an ApplicationSet without steps created its Application")
	}
}
