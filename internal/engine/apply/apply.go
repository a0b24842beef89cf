package apply

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/kube"
)

// Applier runs sync plans against one cluster. Every field but Progress
// is required unless it documents a default.
type Applier struct {
	Client dynamic.Interface
	Mapper kube.Mapper
	Health *health.Checker
	// FieldManager owns what a sync applies. Default kube.FieldManager.
	FieldManager string
	// Tracking marks applied objects as the Application's. Default annotation.
	Tracking tracking.Method
	// PollInterval is how often health is checked while a wave settles. Default 500ms.
	PollInterval time.Duration
	// WaveDelay is a pause before each wave but the first, for other
	// controllers to act on what the last one applied (Argo CD's
	// ARGOCD_SYNC_WAVE_DELAY). Default 0: none.
	WaveDelay time.Duration
	// Limit, if set, bounds the objects written at once by the syncs that
	// share it, as Argo CD's controller.kubectl.parallelism.limit bounds
	// its kubectl runs: each apply, replace, recreate or delete of one
	// object holds one unit while it runs. Default: no bound.
	Limit *semaphore.Weighted
	// Progress, if set, hears about each step (for events and logs).
	Progress func(Event)
}

// limited runs write, one object's write to the cluster, within Limit.
func (a *Applier) limited(ctx context.Context, write func() error) error {
	if a.Limit == nil {
		return write()
	}
	if err := a.Limit.Acquire(ctx, 1); err != nil {
		return err
	}
	defer a.Limit.Release(1)
	return write()
}

// Action is what a step of a sync did to an object.
type Action string

// The steps a sync reports.
const (
	// ActionApply: the object was applied (or, in a dry run, would be).
	ActionApply Action = "apply"
	// ActionHealthy: the object became healthy (a hook: completed).
	ActionHealthy Action = "healthy"
	// ActionDeleteHook: a completed hook was deleted by its delete policy.
	ActionDeleteHook Action = "delete-hook"
	// ActionPrune: the object was pruned.
	ActionPrune Action = "prune"
)

// Event is one step of a sync.
type Event struct {
	Task   *Task
	Action Action
}

// Request is one sync of one Application.
type Request struct {
	// App is the Application key written into tracking ids.
	App string
	// Namespace is the destination namespace for namespaced objects without one.
	Namespace string
	// NamespaceMetadata, if set, are the labels and annotations of the
	// namespace CreateNamespace makes (syncPolicy.managedNamespaceMetadata),
	// kept as they say on every sync.
	NamespaceMetadata *v1alpha1.ManagedNamespaceMetadata
	Plan              *Plan
	// Prune are live objects of the Application that are no longer desired.
	Prune []*unstructured.Unstructured
	// AllowPrune is the operation's prune flag.
	AllowPrune bool
	// DryRun applies nothing and reports what would be done.
	DryRun bool
	// Force is the operation's sync strategy force (argocd app sync
	// --force): every object is synced as with the Force option.
	Force bool
	// Options are the Application's and operation's sync options.
	Options Options
	// Done are the results an earlier, interrupted run of this same
	// operation recorded (status.operationState.syncResult.resources).
	// A hook recorded as completed is not run again, and one recorded as
	// started is waited for rather than recreated; everything else is
	// applied again, which is idempotent.
	Done []*v1alpha1.ResourceResult
	// Checkpoint, if set, persists the results so far. It is called with
	// force right before a hook is created and right after one completes
	// (before it is deleted), so that a run cut short at any point knows
	// on restart which hooks ran; a forced checkpoint that fails
	// interrupts the sync. Between those it is called as the sync moves
	// on, and may skip the write. Results must not be kept after it returns.
	Checkpoint func(ctx context.Context, res *Result, force bool) error
	// DeletionApproved is the user's approval to prune the objects whose
	// options say Prune=confirm or Delete=confirm.
	DeletionApproved bool
}

// Result is the outcome of a sync.
type Result struct {
	Phase     v1alpha1.OperationPhase
	Message   string
	Resources []*v1alpha1.ResourceResult
	// Applied are the objects applied (not in a dry run), each with the
	// latest state the sync saw of it, so the caller can compare after
	// the sync without waiting for its watches to catch up.
	Applied []Applied
	// Pruned are the objects deleted by the sync.
	Pruned []*unstructured.Unstructured
	// AwaitingConfirmation is set when objects to prune wait for the
	// user's approval (Prune=confirm, Delete=confirm; Request's
	// DeletionApproved): the sync is neither failed nor succeeded, Message
	// names them, and running it again once approved finishes it.
	AwaitingConfirmation bool
	// Interrupted is set when the sync stopped before it finished for a
	// reason of the controller's (its context ended, or a checkpoint could
	// not be written): it is neither failed nor succeeded, and running the
	// same Request again with Done set to Resources resumes it.
	Interrupted bool
}

// errAwaitingConfirmation stops a sync whose pruning waits for the
// user's approval.
var errAwaitingConfirmation = errors.New("waiting for pruning confirmation")

// Applied is one object a sync applied.
type Applied struct {
	// Sent is the object as sent, with namespace and tracking set.
	Sent *unstructured.Unstructured
	// Live is the object as the API server last returned it.
	Live *unstructured.Unstructured
}

// Run applies the plan phase by phase and wave by wave, waiting after each
// wave but the last until its objects are healthy (hooks: until they
// complete), and prunes after the Sync phase. On a
// failure it stops, runs the SyncFail hooks and reports Failed.
func (a *Applier) Run(ctx context.Context, req *Request) *Result {
	a.defaults()
	res := &Result{Phase: v1alpha1.OperationSucceeded, Message: "successfully synced (all tasks run)"}
	err := a.run(ctx, req, res)
	if err == nil {
		return res
	}
	res.Phase, res.Message = v1alpha1.OperationFailed, err.Error()
	if errors.Is(err, errAwaitingConfirmation) {
		res.Phase, res.AwaitingConfirmation = v1alpha1.OperationRunning, true
		return res
	}
	if ctx.Err() != nil || errors.Is(err, errCheckpoint) {
		res.Phase, res.Interrupted = v1alpha1.OperationError, true
		return res
	}
	for _, wave := range req.Plan.Waves(v1alpha1.SyncPhaseSyncFail) {
		if failErr := a.runWave(ctx, req, wave, res, false); failErr != nil {
			res.Message += "; SyncFail hook: " + failErr.Error()
			break
		}
	}
	return res
}

func (a *Applier) defaults() {
	if a.FieldManager == "" {
		a.FieldManager = kube.FieldManager
	}
	if a.Tracking.IsZero() {
		a.Tracking = tracking.Annotation
	}
	if a.PollInterval == 0 {
		a.PollInterval = 500 * time.Millisecond
	}
}

func (a *Applier) run(ctx context.Context, req *Request, res *Result) error {
	if req.Options.CreateNamespace && req.Namespace != "" && !req.DryRun {
		if err := a.ensureNamespace(ctx, req.Namespace, req.NamespaceMetadata); err != nil {
			return err
		}
	}
	type step struct {
		phase v1alpha1.SyncPhase
		tasks []*Task
	}
	var steps []step
	for _, phase := range PhaseOrder() {
		for _, wave := range req.Plan.Waves(phase) {
			steps = append(steps, step{phase, wave})
		}
	}
	pruned, pruneLast := false, a.pruneLast(req)
	for i, st := range steps {
		if st.phase != v1alpha1.SyncPhasePreSync && st.phase != v1alpha1.SyncPhaseSync && !pruned {
			if err := a.prune(ctx, req, res); err != nil {
				return err
			}
			pruned = true
		}
		// As in Argo CD, a wave waits for its resources to become healthy
		// only when another wave follows; hooks always run to completion.
		// With PruneLast, the last wave is waited for too: what is pruned
		// goes once everything else is healthy.
		if i > 0 && a.WaveDelay > 0 {
			if err := pause(ctx, a.WaveDelay); err != nil {
				return err
			}
		}
		if err := a.runWave(ctx, req, st.tasks, res, i == len(steps)-1 && !pruneLast); err != nil {
			return err
		}
	}
	if !pruned {
		return a.prune(ctx, req, res)
	}
	return nil
}

// pruneLast reports whether the sync, or an object it prunes, asks for
// PruneLast while there is something to prune.
func (a *Applier) pruneLast(req *Request) bool {
	if !req.AllowPrune || len(req.Prune) == 0 {
		return false
	}
	if req.Options.PruneLast {
		return true
	}
	for _, obj := range req.Prune {
		if own, err := ParseOptions(obj.GetAnnotations()[v1alpha1.AnnotationSyncOptions]); err == nil && own.PruneLast {
			return true
		}
	}
	return false
}

// runWave applies every task of a wave, then waits for all of them (for
// the hooks only, when it is the final wave).
func (a *Applier) runWave(ctx context.Context, req *Request, wave []*Task, res *Result, final bool) error {
	results := make([]*v1alpha1.ResourceResult, len(wave))
	live := make([]*unstructured.Unstructured, len(wave))
	ran := make([]bool, len(wave)) // false: a hook an earlier run completed
	defer func() {
		for i, t := range wave {
			if live[i] != nil && !t.Hook {
				res.Applied = append(res.Applied, Applied{Sent: t.Obj, Live: live[i]})
			}
		}
	}()
	for i, t := range wave {
		rr, obj, done, err := a.apply(ctx, req, t, res)
		results[i], live[i], ran[i] = rr, obj, !done
		if err != nil {
			return err
		}
	}
	if req.DryRun {
		live = make([]*unstructured.Unstructured, len(wave))
		return nil
	}
	a.checkpoint(ctx, req, res)
	for i, t := range wave {
		if !ran[i] || (final && !t.Hook) {
			continue
		}
		obj, err := a.wait(ctx, req, t, results[i], live[i], res)
		if obj != nil {
			live[i] = obj
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (a *Applier) resource(obj *unstructured.Unstructured, defaultNS string) (dynamic.ResourceInterface, error) {
	m, err := a.Mapper.Mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		obj.SetNamespace("")
		return a.Client.Resource(m.Resource), nil
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(defaultNS)
	}
	return a.Client.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
}

// apply applies one task, appending its result to res, and returns the
// object the API server returned. done is set for a hook an earlier run
// of the operation completed: it is not applied again.
func (a *Applier) apply(ctx context.Context, req *Request, t *Task, res *Result) (rr *v1alpha1.ResourceResult, live *unstructured.Unstructured, done bool, err error) {
	obj := t.Obj.DeepCopy()
	ri, err := a.resourceOf(ctx, req, t, obj)
	rr = resultFor(t, obj)
	res.Resources = append(res.Resources, rr)
	if errors.Is(err, errNotServedYet) {
		rr.Status, rr.Message = v1alpha1.ResultCodeSynced, err.Error()
		return rr, nil, false, nil
	}
	if err != nil {
		return failed(rr, err)
	}
	tracking.Set(a.Tracking, req.App, obj)
	if t.Hook && !req.DryRun {
		prior := req.done(rr)
		switch {
		case prior != nil && prior.HookPhase == v1alpha1.OperationSucceeded:
			*rr = *prior
			t.Obj = obj
			return rr, nil, true, nil
		case prior != nil && prior.HookPhase.Completed():
			*rr = *prior
			return rr, nil, true, fmt.Errorf("%s: %s", kube.Ref(obj), prior.Message)
		case prior == nil:
			// A new run of the hook: remove the last one (as its policy
			// asks), then record that this one is being created before
			// creating it. A run resumed after an interruption finds the
			// record and waits for the hook it created instead.
			if hasPolicy(t, BeforeHookCreation) {
				// Only the delete request holds a write unit, not the wait
				// for the old hook (its pods, its finalizers) to go.
				write := func(f func() error) error { return a.limited(ctx, f) }
				if err := deleteThenWait(ctx, ri, obj.GetName(), a.PollInterval, write); err != nil {
					return failed(rr, err)
				}
			}
			rr.HookPhase, rr.Message = v1alpha1.OperationRunning, "creating"
			if err := a.forceCheckpoint(ctx, req, res); err != nil {
				return failed(rr, err)
			}
		}
	}
	a.emit(t, ActionApply)
	data, err := json.Marshal(obj)
	if err != nil {
		return failed(rr, err)
	}
	var dryRun []string
	if req.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	// Unknown or duplicate fields fail the sync, as kubectl's validation
	// does. Validate=false turns the API server's field validation off;
	// server-side apply still refuses fields a built-in kind's schema lacks,
	// which only Replace=true then drops.
	validation := "Strict"
	if v := firstSet(t.Options.Validate, req.Options.Validate); v != nil && !*v {
		validation = "Ignore"
	}
	replace := (req.Options.Replace || t.Options.Replace) && !t.Hook
	force := (req.Force || req.Options.Force || t.Options.Force) && !req.DryRun
	apply := func() (*unstructured.Unstructured, error) {
		return ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
			FieldManager: a.FieldManager, Force: new(true), DryRun: dryRun, FieldValidation: validation,
		})
	}
	ssa := firstSet(t.Options.ServerSideApply, req.Options.ServerSideApply)
	migrate := firstSet(t.Options.ClientSideApplyMigration, req.Options.ClientSideApplyMigration)
	err = a.limited(ctx, func() (err error) {
		switch {
		case replace && force:
			live, err = a.recreate(ctx, ri, obj, apply)
		case replace:
			live, err = a.replace(ctx, ri, obj, dryRun, validation)
		case ssa != nil && !*ssa:
			live, err = a.clientSideApply(ctx, ri, obj, dryRun, validation)
		default:
			if live, err = apply(); err != nil && force && cannotPatch(err) {
				live, err = a.recreate(ctx, ri, obj, apply)
			}
			if err == nil && !req.DryRun && (migrate == nil || *migrate) {
				live, err = a.migrateClientSideApply(ctx, ri, obj, live, apply)
			}
		}
		return err
	})
	if err != nil {
		return failed(rr, fmt.Errorf("applying %s: %w", kube.Ref(obj), err))
	}
	t.Obj = obj // later steps see the namespace and tracking id as applied
	rr.Status = v1alpha1.ResultCodeSynced
	rr.Message = map[bool]string{true: "applied (dry run)", false: "applied"}[req.DryRun]
	if t.Hook {
		rr.HookPhase = v1alpha1.OperationRunning
	}
	return rr, live, false, nil
}

// replace creates obj, or replaces the live object with it whole (PUT), as
// Replace=true asks: fields other managers set are dropped, and kinds
// whose fields cannot be changed by apply can be updated.
func (a *Applier) replace(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, dryRun []string, validation string) (*unstructured.Unstructured, error) {
	for attempt := 0; ; attempt++ {
		cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: a.FieldManager, DryRun: dryRun, FieldValidation: validation})
		}
		if err != nil {
			return nil, err
		}
		next := obj.DeepCopy()
		next.SetResourceVersion(cur.GetResourceVersion())
		out, err := ri.Update(ctx, next, metav1.UpdateOptions{FieldManager: a.FieldManager, DryRun: dryRun, FieldValidation: validation})
		if apierrors.IsConflict(err) && attempt < 3 {
			continue // changed between the read and the write: read again
		}
		return out, err
	}
}

// cannotPatch reports whether an apply failed because the object cannot
// be changed in place (an immutable field, or a conflict), which Force
// answers by recreating it; any other invalid object is left alone.
func cannotPatch(err error) bool {
	return apierrors.IsConflict(err) || kube.IsImmutableChange(err)
}

// recreate deletes the live object, waits until it is gone (with its
// dependents), and applies obj anew, as Force asks: for what apply cannot
// change, such as an immutable field or a Job that must run again. When
// the new object is refused, the old one is put back (without its
// server-set fields) so a bad manifest never loses what ran.
func (a *Applier) recreate(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured,
	apply func() (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	old, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if err := deleteAndWait(ctx, ri, obj.GetName(), a.PollInterval); err != nil {
		return nil, fmt.Errorf("deleting %s to recreate it: %w", kube.Ref(obj), err)
	}
	live, err := apply()
	if err == nil || old == nil {
		return live, err
	}
	restore := old.DeepCopy()
	for _, f := range [][]string{{"metadata", "resourceVersion"}, {"metadata", "uid"}, {"metadata", "creationTimestamp"},
		{"metadata", "managedFields"}, {"metadata", "generation"}, {"status"}} {
		unstructured.RemoveNestedField(restore.Object, f...)
	}
	if _, rerr := ri.Create(ctx, restore, metav1.CreateOptions{FieldManager: a.FieldManager}); rerr != nil {
		return nil, fmt.Errorf("%w; putting the deleted object back failed too: %v", err, rerr)
	}
	return nil, fmt.Errorf("%w (the deleted object was put back)", err)
}

// wait checks the applied object until it is healthy, a hook completes, or
// it degrades: first as the apply returned it, then by polling. It returns
// the last state read.
func (a *Applier) wait(ctx context.Context, req *Request, t *Task, rr *v1alpha1.ResourceResult, applied *unstructured.Unstructured, res *Result) (*unstructured.Unstructured, error) {
	ri, err := a.resource(t.Obj, req.Namespace)
	if err != nil {
		return nil, err
	}
	live := applied
	for {
		if live == nil {
			got, err := ri.Get(ctx, t.Obj.GetName(), metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("reading %s: %w", kube.Ref(t.Obj), err)
			}
			if err == nil {
				live = got
			}
		}
		st := health.Status{Status: v1alpha1.HealthStatusMissing}
		if live != nil {
			if st, err = a.Health.Check(live); err != nil {
				return live, err
			}
		}
		switch st.Status {
		case v1alpha1.HealthStatusHealthy, v1alpha1.HealthStatusSuspended:
			a.emit(t, ActionHealthy)
			if t.Hook {
				// Recorded before the hook may be deleted: a run resumed
				// later must know it ran, whether or not it still exists.
				rr.HookPhase, rr.Message = v1alpha1.OperationSucceeded, cmp.Or(st.Message, "hook completed")
				if err := a.forceCheckpoint(ctx, req, res); err != nil {
					rr.HookPhase = v1alpha1.OperationRunning
					return live, err
				}
				return live, a.deleteHook(ctx, ri, t, HookSucceeded)
			}
			return live, nil
		case v1alpha1.HealthStatusDegraded:
			msg := fmt.Sprintf("%s is Degraded: %s", kube.Ref(t.Obj), st.Message)
			if t.Hook {
				rr.HookPhase, rr.Message = v1alpha1.OperationFailed, st.Message
				rr.Status = v1alpha1.ResultCodeSyncFailed
				if err := a.forceCheckpoint(ctx, req, res); err != nil {
					return live, err
				}
				if err := a.deleteHook(ctx, ri, t, HookFailed); err != nil {
					msg += "; " + err.Error()
				}
			}
			return live, errors.New(msg)
		}
		a.checkpoint(ctx, req, res)
		select {
		case <-ctx.Done():
			return live, fmt.Errorf("waiting for %s to become healthy (last: %s %s): %w", kube.Ref(t.Obj), st.Status, st.Message, ctx.Err())
		case <-time.After(a.PollInterval):
		}
		live = nil
	}
}

func (a *Applier) deleteHook(ctx context.Context, ri dynamic.ResourceInterface, t *Task, when DeletePolicy) error {
	if !hasPolicy(t, when) {
		return nil
	}
	a.emit(t, ActionDeleteHook)
	err := a.limited(ctx, func() error {
		return ri.Delete(ctx, t.Obj.GetName(), metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationBackground)})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting hook %s: %w", kube.Ref(t.Obj), err)
	}
	return nil
}

// prune deletes live objects that are no longer desired, unless the sync or
// the object says not to.
func (a *Applier) prune(ctx context.Context, req *Request, res *Result) error {
	var awaiting []string
	for _, obj := range req.Prune {
		t := &Task{Obj: obj, Phase: v1alpha1.SyncPhaseSync}
		rr := resultFor(t, obj)
		res.Resources = append(res.Resources, rr)
		own, err := ParseOptions(obj.GetAnnotations()[v1alpha1.AnnotationSyncOptions])
		if err != nil {
			return fmt.Errorf("%s: %w", kube.Ref(obj), err)
		}
		switch {
		case !req.AllowPrune:
			rr.Status, rr.Message = v1alpha1.ResultCodePruneSkipped, "ignored (requires pruning)"
			continue
		case own.Prune != nil && !*own.Prune:
			rr.Status, rr.Message = v1alpha1.ResultCodePruneSkipped, "ignored (Prune=false)"
			continue
		case own.Delete != nil && !*own.Delete:
			rr.Status, rr.Message = v1alpha1.ResultCodePruneSkipped, "ignored (Delete=false)"
			continue
		case (own.PruneConfirm || own.DeleteConfirm || req.Options.PruneConfirm) && !req.DeletionApproved && !req.DryRun:
			rr.Message = "waiting for pruning confirmation"
			awaiting = append(awaiting, kube.Ref(obj))
			continue
		}
		a.emit(t, ActionPrune)
		if req.DryRun {
			rr.Status, rr.Message = v1alpha1.ResultCodePruned, "pruned (dry run)"
			continue
		}
		ri, err := a.resource(obj.DeepCopy(), req.Namespace)
		if err != nil {
			return err
		}
		propagation := metav1.DeletePropagationForeground
		if p := cmp.Or(own.PrunePropagation, req.Options.PrunePropagation); p != "" {
			propagation = map[string]metav1.DeletionPropagation{"foreground": metav1.DeletePropagationForeground, "background": metav1.DeletePropagationBackground, "orphan": metav1.DeletePropagationOrphan}[p]
		}
		err = a.limited(ctx, func() error {
			return ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &propagation})
		})
		if err != nil && !apierrors.IsNotFound(err) {
			err = fmt.Errorf("pruning %s: %w", kube.Ref(obj), err)
			rr.Status, rr.Message = v1alpha1.ResultCodeSyncFailed, err.Error()
			return err
		}
		rr.Status, rr.Message = v1alpha1.ResultCodePruned, "pruned"
		res.Pruned = append(res.Pruned, obj)
	}
	if len(awaiting) > 0 {
		return fmt.Errorf("%w of %s", errAwaitingConfirmation, strings.Join(awaiting, ", "))
	}
	return nil
}

func (a *Applier) ensureNamespace(ctx context.Context, name string, meta *v1alpha1.ManagedNamespaceMetadata) error {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	ns.SetName(name)
	if meta != nil {
		ns.SetLabels(meta.Labels)
		ns.SetAnnotations(meta.Annotations)
	}
	data, _ := json.Marshal(ns)
	_, err := a.Client.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Patch(ctx, name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: a.FieldManager})
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

func (a *Applier) emit(t *Task, action Action) {
	if a.Progress != nil {
		a.Progress(Event{Task: t, Action: action})
	}
}

// deleteAndWait deletes an object (a hook about to be recreated) and waits
// until it is gone.
func deleteAndWait(ctx context.Context, ri dynamic.ResourceInterface, name string, poll time.Duration) error {
	return deleteThenWait(ctx, ri, name, poll, func(delete func() error) error { return delete() })
}

// deleteThenWait is deleteAndWait with the delete request made through
// write (Applier.limited, say), and the wait outside it.
func deleteThenWait(ctx context.Context, ri dynamic.ResourceInterface, name string, poll time.Duration, write func(func() error) error) error {
	err := write(func() error {
		return ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationForeground)})
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for {
		if _, err := ri.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

func resultFor(t *Task, obj *unstructured.Unstructured) *v1alpha1.ResourceResult {
	gvk := obj.GroupVersionKind()
	rr := &v1alpha1.ResourceResult{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), SyncPhase: t.Phase}
	if t.Hook {
		rr.HookType = t.HookType
	}
	return rr
}

func failed(rr *v1alpha1.ResourceResult, err error) (*v1alpha1.ResourceResult, *unstructured.Unstructured, bool, error) {
	if !errors.Is(err, errCheckpoint) {
		rr.Status, rr.Message = v1alpha1.ResultCodeSyncFailed, err.Error()
	}
	return rr, nil, false, err
}

func hasPolicy(t *Task, p DeletePolicy) bool {
	for _, x := range t.DeletePolicies {
		if x == p {
			return true
		}
	}
	return false
}

func firstSet(vals ...*bool) *bool {
	for _, v := range vals {
		if v != nil {
			return v
		}
	}
	return nil
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
