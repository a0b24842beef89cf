package applicationset

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
)

// Reconciler brings one ApplicationSet's Applications in line with what
// its generators yield.
type Reconciler struct {
	// Client reads and writes ApplicationSets, Applications and AppProjects.
	Client client.Client
	// Sources are what generators read.
	Sources Sources
	// Policy, when set, is the controller's applications sync policy
	// (--policy); an ApplicationSet's own policy wins over it only when
	// PolicyOverride is set. Default: none, each ApplicationSet's own.
	Policy         v1alpha1.ApplicationsSyncPolicy
	PolicyOverride bool
	// PreservedLabels and PreservedAnnotations are kept on generated
	// Applications as found, besides each ApplicationSet's preservedFields.
	PreservedLabels, PreservedAnnotations []string
	// DryRun computes changes without writing Applications (--dry-run).
	DryRun bool
	// MaxResourcesStatus bounds status.resources (0: no bound).
	MaxResourcesStatus int
	// Log receives one line per change. Default: slog's default logger.
	Log *slog.Logger
	// Now is the clock for condition times. Default time.Now.
	Now func() time.Time
	// ProgressiveSyncs runs the RollingSync strategy (see Options).
	ProgressiveSyncs bool
	// Rollouts, if set, hears of RollingSync progress, for metrics.
	// Default: none.
	Rollouts RolloutObserver
}

// RolloutObserver hears of ApplicationSets' progressive syncs.
type RolloutObserver interface {
	// RolloutStatus is told each stored status.applicationStatus.
	RolloutStatus(as *v1alpha1.ApplicationSet)
	// RolloutSyncs is told the steps of the Applications a reconcile
	// asks to sync (one entry each), and how long after it began to plan.
	RolloutSyncs(as *v1alpha1.ApplicationSet, steps []string, sinceDetection time.Duration)
}

// policyOf is the policy that applies to an ApplicationSet.
func (r *Reconciler) policyOf(as *v1alpha1.ApplicationSet) v1alpha1.ApplicationsSyncPolicy {
	own := v1alpha1.ApplicationsSyncPolicy("")
	if sp := as.Spec.SyncPolicy; sp != nil && sp.ApplicationsSync != nil {
		own = *sp.ApplicationsSync
	}
	if r.Policy == "" || (r.PolicyOverride && own != "") {
		return own
	}
	return r.Policy
}

// Reconcile generates, applies and records one ApplicationSet, returning
// what it changed and when its generators want to run again.
func (r *Reconciler) Reconcile(ctx context.Context, as *v1alpha1.ApplicationSet) ([]Change, time.Duration, error) {
	log := r.Log
	if log == nil {
		log = slog.Default()
	}
	log = log.With("applicationset", as.Namespace+"/"+as.Name)
	results, requeue, err := Generate(ctx, as, r.Sources)
	var desired []*v1alpha1.Application
	if err == nil {
		desired, err = Desired(as, results)
	}
	if err != nil {
		log.Warn("generating Applications failed", "error", err.Error())
		return nil, requeueOnError(requeue), r.writeStatus(ctx, as, outcome{generateErr: err}, nil)
	}
	owned, all, err := r.liveApps(ctx, as)
	if err != nil {
		return nil, requeue, err
	}
	a := &applier{client: r.Client, as: as, policy: r.policyOf(as), dryRun: r.DryRun,
		preservedLabels: r.PreservedLabels, preservedAnnotations: r.PreservedAnnotations}
	if pf := as.Spec.PreservedFields; pf != nil {
		a.preservedLabels = append(append([]string(nil), a.preservedLabels...), pf.Labels...)
		a.preservedAnnotations = append(append([]string(nil), a.preservedAnnotations...), pf.Annotations...)
	}
	var changes []Change
	var out outcome
	if r.ProgressiveSyncs && rollingSync(as) {
		detected := time.Now()
		if out.rollout = r.roll(ctx, as, a, desired, owned); out.rollout.noSteps {
			// Nothing is applied: every Application would sync at once.
			return nil, requeueOnError(requeue), r.writeStatus(ctx, as, out, nil)
		}
		// The states are stored before any sync is asked for: a
		// reconcile that read an out-of-date ApplicationSet fails here
		// (a conflict) instead of syncing an Application twice.
		if err := r.saveRollout(ctx, as, out.rollout); err != nil {
			return nil, requeue, err
		}
		requeue = out.rollout.requeue(requeue)
		if r.Rollouts != nil {
			r.Rollouts.RolloutStatus(as)
			r.Rollouts.RolloutSyncs(as, out.rollout.syncSteps(desired), time.Since(detected))
		}
	}
	fail := func(reason string, err error) {
		if out.applyErr == nil {
			out.applyErr, out.applyReason = err, reason
		}
		log.Warn("applying an Application failed", "reason", reason, "error", err.Error())
	}
	wanted := map[string]bool{}
	for _, want := range desired {
		wanted[want.Name] = true
		if err := r.validate(ctx, want); err != nil {
			fail(v1alpha1.ApplicationSetReasonApplicationValidationError, err)
			continue
		}
		action, err := a.apply(ctx, want, all[want.Name])
		if err != nil {
			reason := v1alpha1.ApplicationSetReasonUpdateApplicationError
			if all[want.Name] == nil {
				reason = v1alpha1.ApplicationSetReasonCreateApplicationError
			}
			fail(reason, err)
			continue
		}
		changes = record(log, changes, want.Name, action)
	}
	for name, app := range owned {
		if wanted[name] || app.DeletionTimestamp != nil {
			continue
		}
		action, err := a.remove(ctx, app)
		if err != nil {
			fail(v1alpha1.ApplicationSetReasonDeleteApplicationError, err)
			continue
		}
		changes = record(log, changes, name, action)
	}
	after, _, err := r.liveApps(ctx, as)
	if err != nil {
		return changes, requeue, err
	}
	apps := make([]*v1alpha1.Application, 0, len(after))
	for _, app := range after {
		apps = append(apps, app)
	}
	if out.applyErr != nil {
		requeue = requeueOnError(requeue)
	}
	return changes, requeue, r.writeStatus(ctx, as, out, apps)
}

// requeueOnError is when a failed ApplicationSet is tried again.
func requeueOnError(requeue time.Duration) time.Duration {
	if requeue == 0 || requeue > DefaultRequeueAfter {
		return DefaultRequeueAfter
	}
	return requeue
}

func record(log *slog.Logger, changes []Change, name string, action Action) []Change {
	if action != ActionUnchanged {
		log.Info("application "+string(action), "application", name, "action", string(action))
	}
	return append(changes, Change{Name: name, Action: action})
}

// liveApps returns the Applications of the ApplicationSet's namespace:
// those it controls, and all of them, by name.
func (r *Reconciler) liveApps(ctx context.Context, as *v1alpha1.ApplicationSet) (owned, all map[string]*v1alpha1.Application, err error) {
	var list v1alpha1.ApplicationList
	if err := r.Client.List(ctx, &list, client.InNamespace(as.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("listing Applications in %s: %w", as.Namespace, err)
	}
	owned, all = map[string]*v1alpha1.Application{}, map[string]*v1alpha1.Application{}
	for i := range list.Items {
		app := &list.Items[i]
		all[app.Name] = app
		if ref := controllerOf(app); ref != nil && ref.UID == as.UID {
			owned[app.Name] = app
		}
	}
	return owned, all, nil
}

// validate checks what Argo CD checks of a generated Application before
// writing it: that its project exists and, for an ApplicationSet outside
// the control namespace, that the project (however the template or a
// templatePatch chose it) lets Applications live in that namespace — so a
// tenant's ApplicationSet cannot place Applications in a project that
// does not take them.
func (r *Reconciler) validate(ctx context.Context, app *v1alpha1.Application) error {
	if app.Spec.Project == "" {
		return fmt.Errorf("the spec.project of Application/%s/%s is empty", app.Namespace, app.Name)
	}
	var proj v1alpha1.AppProject
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Sources.Namespace, Name: app.Spec.Project}, &proj)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("application references project %s which does not exist (Application/%s/%s)", app.Spec.Project, app.Namespace, app.Name)
	}
	if err != nil {
		return err
	}
	if app.Namespace != r.Sources.Namespace && !project.MatchesAny(proj.Spec.SourceNamespaces, app.Namespace, false) {
		return fmt.Errorf("application '%s' in namespace '%s' is not permitted to use project '%s'", app.Name, app.Namespace, proj.Name)
	}
	return nil
}

// writeStatus records the outcome in the ApplicationSet's status when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, as *v1alpha1.ApplicationSet, out outcome, apps []*v1alpha1.Application) error {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	next := as.DeepCopy()
	next.Status.Conditions = mergeConditions(as.Status.Conditions, out.conditions(), now())
	switch {
	case out.rollout != nil:
		next.Status.ApplicationStatus = out.rollout.statuses
	case !r.ProgressiveSyncs || !rollingSync(as):
		next.Status.ApplicationStatus = nil // no rollout: no stale steps
	}
	if out.generateErr == nil && (out.rollout == nil || !out.rollout.noSteps) {
		next.Status.Resources = resources(apps, r.MaxResourcesStatus)
		next.Status.ResourcesCount = int64(len(apps))
	}
	if equality.Semantic.DeepEqual(next.Status, as.Status) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, next); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return err // retried with a fresh copy
		}
		return fmt.Errorf("writing the status of ApplicationSet/%s/%s: %w", as.Namespace, as.Name, err)
	}
	return nil
}
