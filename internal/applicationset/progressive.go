package applicationset

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// The progressive sync states of a generated Application, as Argo CD
// records them in status.applicationStatus.
const (
	// RolloutWaiting: the Application has changes its step has not let
	// through yet.
	RolloutWaiting = "Waiting"
	// RolloutPending: its step lets it through; a sync was asked for.
	RolloutPending = "Pending"
	// RolloutProgressing: the sync started; waiting for Healthy.
	RolloutProgressing = "Progressing"
	// RolloutHealthy: synced and healthy at its current revision.
	RolloutHealthy = "Healthy"
)

// The messages Argo CD records for a change waiting for its step.
const (
	msgRevisionAndSpecChanged = "Application has pending changes (revision and spec differ), setting status to Waiting"
	msgRevisionChanged        = "Application has pending changes, setting status to Waiting"
	msgSpecChanged            = "Application has pending changes (spec differs), setting status to Waiting"
)

// rollingSync reports whether an ApplicationSet asks for a RollingSync.
func rollingSync(as *v1alpha1.ApplicationSet) bool {
	s := as.Spec.Strategy
	return s != nil && s.Type == "RollingSync" && s.RollingSync != nil
}

// rollout is one reconcile's progressive sync of an ApplicationSet.
type rollout struct {
	// noSteps: the strategy lists no step; nothing is applied.
	noSteps bool
	steps   []v1alpha1.ApplicationSetRolloutStep
	stepOf  map[string]int // by Application name, 0-based
	byStep  [][]string
	// issues are problems of the steps' configuration.
	issues []string
	// statuses are status.applicationStatus as this reconcile leaves it.
	statuses []v1alpha1.ApplicationSetApplicationStatus
	// release are the Applications of the steps reached so far.
	release map[string]bool
}

// planRollout places the desired Applications in their steps, moves each
// live Application's state on from what it reports, and lets the next
// Applications through within each step's maxUpdate. changed reports
// whether a live Application's spec differs from the desired one.
func planRollout(as *v1alpha1.ApplicationSet, desired []*v1alpha1.Application, live map[string]*v1alpha1.Application,
	changed func(name string) bool, now time.Time) *rollout {
	r := &rollout{steps: as.Spec.Strategy.RollingSync.Steps, stepOf: map[string]int{}}
	r.place(desired)
	r.advance(as.Status.ApplicationStatus, live, changed, metav1.NewTime(now))
	r.reach(live)
	r.letThrough(metav1.NewTime(now))
	return r
}

// place puts each Application in the first step whose matchExpressions
// its labels meet (In: a listed value; NotIn: none, or no such label).
func (r *rollout) place(desired []*v1alpha1.Application) {
	r.byStep = make([][]string, len(r.steps))
	bad := map[string]bool{}
	for _, app := range desired {
		for i, step := range r.steps {
			if !r.selects(i, step, app.Labels, bad) {
				continue
			}
			r.byStep[i] = append(r.byStep[i], app.Name)
			if first, dup := r.stepOf[app.Name]; dup {
				r.issues = append(r.issues, fmt.Sprintf("Application %s is selected by steps %d and %d", app.Name, first+1, i+1))
			} else {
				r.stepOf[app.Name] = i
			}
		}
	}
	for i, names := range r.byStep {
		if len(names) == 0 {
			r.issues = append(r.issues, fmt.Sprintf("step %d selects no Application", i+1))
		}
	}
}

func (r *rollout) selects(i int, step v1alpha1.ApplicationSetRolloutStep, labels map[string]string, bad map[string]bool) bool {
	for _, e := range step.MatchExpressions {
		if e.Operator != "In" && e.Operator != "NotIn" {
			key := fmt.Sprintf("%d/%s", i, e.Operator)
			if !bad[key] {
				bad[key] = true
				r.issues = append(r.issues, fmt.Sprintf("step %d: matchExpressions operator %q is not In or NotIn", i+1, e.Operator))
			}
			return false
		}
		v, has := labels[e.Key]
		if !has {
			if e.Operator == "In" {
				return false
			}
			continue
		}
		if slices.Contains(e.Values, v) != (e.Operator == "In") {
			return false
		}
	}
	return true
}

// step is an Application's step as status records it: 1-based, -1 when
// no step selects it.
func (r *rollout) step(name string) string {
	if i, ok := r.stepOf[name]; ok {
		return strconv.Itoa(i + 1)
	}
	return "-1"
}

// advance moves each live Application's state on: a new revision or spec
// puts it back to Waiting (or straight to Healthy or Progressing when it
// is already synced); a Pending one whose sync started is Progressing; a
// Progressing one synced and healthy is Healthy.
func (r *rollout) advance(prev []v1alpha1.ApplicationSetApplicationStatus, live map[string]*v1alpha1.Application, changed func(string) bool, now metav1.Time) {
	names := make([]string, 0, len(live))
	for name := range live {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		app := live[name]
		cur := v1alpha1.ApplicationSetApplicationStatus{Application: name, TargetRevisions: revisions(app), LastTransitionTime: &now,
			Message: "No Application status found, defaulting status to Waiting", Status: RolloutWaiting}
		if i := slices.IndexFunc(prev, func(s v1alpha1.ApplicationSetApplicationStatus) bool { return s.Application == name }); i >= 0 {
			cur = *prev[i].DeepCopy()
		}
		next := cur
		next.Step = r.step(name)
		revChanged := !slices.Equal(cur.TargetRevisions, revisions(app))
		specChanged := changed(name)
		synced, healthy := app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced, app.Status.Health.Status == v1alpha1.HealthStatusHealthy
		if revChanged || specChanged {
			next.TargetRevisions, next.Status, next.LastTransitionTime = revisions(app), RolloutWaiting, &now
			switch {
			case revChanged && specChanged:
				next.Message = msgRevisionAndSpecChanged
			case revChanged:
				next.Message = msgRevisionChanged
			default:
				next.Message = msgSpecChanged
			}
		}
		switch {
		case next.Status == RolloutWaiting && synced && healthy:
			next.Status, next.LastTransitionTime, next.Message = RolloutHealthy, &now, "Application resource has synced, updating status to Healthy"
		case next.Status == RolloutWaiting && synced:
			next.Status, next.LastTransitionTime, next.Message = RolloutProgressing, &now, "Application resource has synced, updating status to Progressing"
		case next.Status == RolloutPending && syncStarted(app, cur.LastTransitionTime):
			next.Status, next.LastTransitionTime = RolloutProgressing, &now
			next.Message = "Application resource became Progressing, updating status from Pending to Progressing"
		case next.Status == RolloutPending && hasError(app):
			next.Status, next.LastTransitionTime = RolloutProgressing, &now
			next.Message = "Application resource has error and cannot sync, updating status to Progressing"
		case next.Status == RolloutProgressing && synced && healthy:
			next.Status, next.LastTransitionTime = RolloutHealthy, &now
			next.Message = "Application resource became Healthy, updating status from Progressing to Healthy"
		}
		r.statuses = append(r.statuses, next)
	}
}

// reach lets through the Applications of each step in turn, up to the
// first step not yet wholly Healthy (or not yet wholly created).
func (r *rollout) reach(live map[string]*v1alpha1.Application) {
	r.release = map[string]bool{}
	for _, names := range r.byStep {
		done := true
		for _, name := range names {
			r.release[name] = true
			s := r.status(name)
			if live[name] == nil || s == nil || s.Status != RolloutHealthy {
				done = false
			}
		}
		if !done {
			return
		}
	}
}

// letThrough moves released Waiting Applications to Pending, no more
// Pending or Progressing at once per step than its maxUpdate allows.
func (r *rollout) letThrough(now metav1.Time) {
	total, updating := make([]int, len(r.steps)), make([]int, len(r.steps))
	for _, s := range r.statuses {
		i, ok := r.stepOf[s.Application]
		if !ok {
			continue
		}
		total[i]++
		if s.Status == RolloutPending || s.Status == RolloutProgressing {
			updating[i]++
		}
	}
	for k := range r.statuses {
		s := &r.statuses[k]
		i, ok := r.stepOf[s.Application]
		if !ok || s.Status != RolloutWaiting || !r.release[s.Application] {
			continue
		}
		if limit, bounded := r.maxUpdate(i, total[i]); bounded && updating[i] >= limit {
			continue
		}
		s.Status, s.LastTransitionTime = RolloutPending, &now
		s.Message = "Application moved to Pending status, watching for the Application resource to start Progressing"
		updating[i]++
	}
}

// maxUpdate is how many of a step's n Applications may update at once;
// bounded is false without a valid maxUpdate. A percentage above 0%
// always lets one through.
func (r *rollout) maxUpdate(i, n int) (int, bool) {
	m := r.steps[i].MaxUpdate
	if m == nil {
		return 0, false
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(m, n, false)
	if err != nil {
		r.issues = append(r.issues, fmt.Sprintf("step %d: maxUpdate %s: %v", i+1, m.String(), err))
		return 0, false
	}
	if m.Type == intstr.String && m.StrVal != "0%" && v < 1 {
		v = 1
	}
	return v, true
}

func (r *rollout) status(name string) *v1alpha1.ApplicationSetApplicationStatus {
	i := slices.IndexFunc(r.statuses, func(s v1alpha1.ApplicationSetApplicationStatus) bool { return s.Application == name })
	if i < 0 {
		return nil
	}
	return &r.statuses[i]
}

// syncSteps are the steps of the desired Applications this reconcile
// syncs, one entry per Application, in order.
func (r *rollout) syncSteps(desired []*v1alpha1.Application) []string {
	var steps []string
	for _, app := range desired {
		if r.syncNow(app.Name) {
			steps = append(steps, r.step(app.Name))
		}
	}
	return steps
}

// syncNow reports whether the controller asks for a sync of the
// Application in this reconcile: released, and Pending.
func (r *rollout) syncNow(name string) bool {
	s := r.status(name)
	return r.release[name] && s != nil && s.Status == RolloutPending
}

// conditions are RolloutProgressing (which step runs, or done) and
// InvalidRolloutConfig (the configuration's issues), as Argo CD sets them.
func (r *rollout) conditions() []v1alpha1.ApplicationSetCondition {
	t, f := v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetConditionStatusFalse
	if r.noSteps {
		return []v1alpha1.ApplicationSetCondition{{Type: v1alpha1.ApplicationSetConditionErrorOccurred, Status: t,
			Reason: v1alpha1.ApplicationSetReasonApplicationSetRolloutError, Message: "No steps defined for rollout"}}
	}
	progressing := ""
	for i, names := range r.byStep {
		for _, name := range names {
			if s := r.status(name); s == nil || s.Status != RolloutHealthy {
				progressing = strconv.Itoa(i + 1)
				break
			}
		}
		if progressing != "" {
			break
		}
	}
	c := v1alpha1.ApplicationSetCondition{Type: v1alpha1.ApplicationSetConditionRolloutProgressing, Status: v1alpha1.ApplicationSetConditionStatusFalse,
		Message: "ApplicationSet Rollout has completed", Reason: v1alpha1.ApplicationSetReasonApplicationSetRolloutComplete}
	if progressing != "" {
		c.Status, c.Reason = v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonApplicationSetModified
		c.Message = "ApplicationSet is performing rollout of step " + progressing
	}
	valid := v1alpha1.ApplicationSetCondition{Type: v1alpha1.ApplicationSetConditionInvalidRolloutConfig, Status: f,
		Reason: v1alpha1.ApplicationSetReasonValidRolloutConfig, Message: "Rolling Sync Configured correctly"}
	if len(r.issues) > 0 {
		valid.Status, valid.Reason = t, v1alpha1.ApplicationSetReasonInvalidRolloutConfig
		valid.Message = strings.Join(slices.Compact(r.issues), "; ")
	}
	return []v1alpha1.ApplicationSetCondition{c, valid}
}

// requeue is when the ApplicationSet is looked at again: soon while a
// step runs (the Applications' progress moves it on).
func (r *rollout) requeue(d time.Duration) time.Duration {
	for _, c := range r.conditions() {
		if c.Type == v1alpha1.ApplicationSetConditionRolloutProgressing && c.Status == v1alpha1.ApplicationSetConditionStatusTrue && (d == 0 || d > rolloutPoll) {
			return rolloutPoll
		}
	}
	return d
}

// rolloutPoll is how often a running rollout is looked at, besides the
// Applications' own changes.
const rolloutPoll = 3 * time.Second

// saveRollout stores the rollout's states in the ApplicationSet's status,
// conditional on the version read, and keeps as up to date.
func (rc *Reconciler) saveRollout(ctx context.Context, as *v1alpha1.ApplicationSet, ro *rollout) error {
	if equality.Semantic.DeepEqual(as.Status.ApplicationStatus, ro.statuses) {
		return nil
	}
	next := as.DeepCopy()
	next.Status.ApplicationStatus = ro.statuses
	if err := rc.Client.Status().Update(ctx, next); err != nil {
		return fmt.Errorf("storing the rollout of ApplicationSet/%s/%s: %w", as.Namespace, as.Name, err)
	}
	*as = *next
	return nil
}

// roll plans this reconcile's rollout: the generated Applications lose
// their automated sync (the rollout syncs them), and those their step
// lets through get a sync operation.
func (rc *Reconciler) roll(ctx context.Context, as *v1alpha1.ApplicationSet, a *applier, desired []*v1alpha1.Application, owned map[string]*v1alpha1.Application) *rollout {
	if len(as.Spec.Strategy.RollingSync.Steps) == 0 {
		return &rollout{noSteps: true}
	}
	byName, prunes := map[string]*v1alpha1.Application{}, map[string]bool{}
	for _, want := range desired {
		byName[want.Name], prunes[want.Name] = want, disableAutomated(want)
	}
	changed := func(name string) bool {
		want, have := byName[name], owned[name]
		if want == nil || have == nil {
			return false
		}
		next, err := a.merged(ctx, want, have)
		return err == nil && !equality.Semantic.DeepEqual(next.Spec, have.Spec)
	}
	now := time.Now
	if rc.Now != nil {
		now = rc.Now
	}
	ro := planRollout(as, desired, owned, changed, now())
	for _, want := range desired {
		if ro.syncNow(want.Name) {
			want.Operation = rolloutOperation(want, prunes[want.Name])
		}
	}
	return ro
}

// revisions are the revisions an Application's last comparison resolved.
func revisions(app *v1alpha1.Application) []string {
	if len(app.Status.Sync.Revisions) > 0 {
		return app.Status.Sync.Revisions
	}
	if app.Status.Sync.Revision != "" {
		return []string{app.Status.Sync.Revision}
	}
	return []string{} // the field is required, so never null
}

// syncStarted reports whether a sync started once the Pending state was
// recorded. Both times are stored to the second, so a sync started in
// that same second counts.
func syncStarted(app *v1alpha1.Application, since *metav1.Time) bool {
	op := app.Status.OperationState
	return op != nil && since != nil && !op.StartedAt.Time.Before(since.Time.Truncate(time.Second))
}

// hasError reports whether the Application cannot be compared or synced.
func hasError(app *v1alpha1.Application) bool {
	return slices.ContainsFunc(app.Status.Conditions, func(c v1alpha1.ApplicationCondition) bool {
		return c.Type == v1alpha1.ApplicationConditionInvalidSpecError || c.Type == v1alpha1.ApplicationConditionUnknownError
	})
}

// rolloutOperation is the sync the controller asks of an Application its
// step lets through, as Argo CD's asks: retried up to five times unless
// the Application's policy says otherwise, pruning when its (disabled)
// automated policy pruned.
func rolloutOperation(app *v1alpha1.Application, prune bool) *v1alpha1.Operation {
	op := &v1alpha1.Operation{
		InitiatedBy: v1alpha1.OperationInitiator{Username: "applicationset-controller", Automated: true},
		Info:        []*v1alpha1.Info{{Name: "Reason", Value: "ApplicationSet RollingSync triggered a sync of this Application resource"}},
		Sync:        &v1alpha1.SyncOperation{Prune: prune},
		Retry:       v1alpha1.RetryStrategy{Limit: 5},
	}
	if sp := app.Spec.SyncPolicy; sp != nil {
		if sp.Retry != nil {
			op.Retry = *sp.Retry
		}
		op.Sync.SyncOptions = sp.SyncOptions
	}
	return op
}

// disableAutomated turns a generated Application's automated sync off
// while the rollout drives it, and reports whether it pruned.
func disableAutomated(app *v1alpha1.Application) (prune bool) {
	sp := app.Spec.SyncPolicy
	if sp == nil || sp.Automated == nil {
		return false
	}
	prune = sp.Automated.Prune && (sp.Automated.Enabled == nil || *sp.Automated.Enabled)
	off := false
	sp.Automated.Enabled = &off
	return prune
}
