package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/apply"
	"github.com/capstan-cd/capstan/internal/engine/diff"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
)

// defaultHistoryLimit is how many syncs status.history keeps by default.
const defaultHistoryLimit = 10

// progressInterval is how often a running sync's progress is written.
// A sync's start is recorded before it changes anything (an automated
// sync's in the journal, any other's as a Running state), its Running
// state is written before each hook is created and after each completes,
// so a sync cut short at any point is resumed after a restart: its
// objects applied again (which changes nothing already applied), no hook
// run twice, and its result and history entry recorded once.
const progressInterval = 5 * time.Second

// pendingOperation returns the operation to run now: the requested one,
// one left Running (a retry, or a sync a stopped controller did not
// finish), or an automated sync. A positive duration asks to be called
// again then (a retry waiting for its backoff).
func (r *reconciler) pendingOperation(app *v1alpha1.Application, comp *comparison) (*v1alpha1.Operation, int64, time.Duration) {
	op := app.Operation
	retryCount := int64(0)
	if st := app.Status.OperationState; st != nil && st.Phase == v1alpha1.OperationRunning {
		// Reconciles of one Application never overlap, so a Running
		// operation seen here is a retry waiting for its backoff, or was
		// left by a controller that stopped mid-sync: run it again.
		if wait := r.retries.wait(r.appKey(app)); wait > 0 {
			return nil, 0, wait
		}
		if op == nil {
			op = st.Operation.DeepCopy()
		}
		retryCount = st.RetryCount
		r.journal.end(app.Namespace, app.Name) // the Running state says all
		if s := retryStrategy(app, op); retryCount > 0 && s != nil && s.Refresh && op.Sync != nil {
			// retry.refresh: the retry takes the latest revision, so a
			// fix pushed meanwhile is what it syncs.
			op = op.DeepCopy()
			op.Sync.Revision, op.Sync.Revisions = "", nil
		}
	}
	if op == nil {
		op = r.journaledOperation(app)
	}
	if op == nil {
		var wait time.Duration
		if op, wait = r.automatedOperation(app, comp); wait > 0 {
			return nil, 0, wait
		}
	}
	if op == nil || op.Sync == nil {
		return nil, 0, 0
	}
	return op, retryCount, 0
}

// journaledOperation returns the automated sync the journal holds for
// app, not recorded on it: a stopped controller, or a final write that
// failed, left it.
func (r *reconciler) journaledOperation(app *v1alpha1.Application) *v1alpha1.Operation {
	e, ok := r.journal.pending(app)
	if !ok {
		return nil
	}
	if e.recordedOn(app) {
		r.journal.end(app.Namespace, app.Name)
		return nil
	}
	return e.Operation.DeepCopy()
}

// requested reports whether the app has an operation asked for or under
// way, rather than an automated sync only now called for.
func (r *reconciler) requested(app *v1alpha1.Application) bool {
	st := app.Status.OperationState
	return app.Operation != nil || (st != nil && st.Phase == v1alpha1.OperationRunning)
}

// terminating reports whether a user asked to end the app's operation.
// It ends at once, whatever the sync windows say.
func terminating(app *v1alpha1.Application) bool {
	st := app.Status.OperationState
	return st != nil && st.Phase == v1alpha1.OperationTerminating
}

// automatedOperation returns the sync an automated policy calls for: the app
// is OutOfSync and either its revision has not been synced yet or self-heal
// is on. A revision whose automated sync failed is not retried by itself.
// A self-heal sync waits for the self-heal backoff: then it returns no
// operation and how long is left.
func (r *reconciler) automatedOperation(app *v1alpha1.Application, comp *comparison) (*v1alpha1.Operation, time.Duration) {
	pol := app.Spec.SyncPolicy
	if !pol.IsAutomatedSyncEnabled() {
		return nil, 0
	}
	if comp.Sync != v1alpha1.SyncStatusCodeOutOfSync {
		return nil, 0
	}
	if wipesOut(app, comp) != nil {
		return nil, 0 // never prune everything without allowEmpty
	}
	op := &v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{Revision: app.Status.Sync.Revision, Prune: pol.Automated.Prune},
		InitiatedBy: v1alpha1.OperationInitiator{Automated: true},
	}
	if st := app.Status.OperationState; st != nil && st.SyncResult != nil && alreadySynced(app, st.SyncResult) && st.Operation.InitiatedBy.Automated {
		if st.Phase == v1alpha1.OperationFailed || st.Phase == v1alpha1.OperationError {
			return nil, 0
		}
		if !pol.Automated.SelfHeal {
			return nil, 0 // this revision was synced; drift since is left alone
		}
		// A self-heal sync: counted, and spaced by the backoff.
		if wait := r.opts.SelfHeal.remaining(st, time.Now()); wait > 0 {
			return nil, wait
		}
		if st.Operation.Sync != nil {
			op.Sync.SelfHealAttemptsCount = st.Operation.Sync.SelfHealAttemptsCount
		}
		op.Sync.SelfHealAttemptsCount++
	}
	return op, 0
}

// skipMessagePrefix starts the SyncError of an automated sync that was not
// attempted, as Argo CD words it.
const skipMessagePrefix = "Skipping sync attempt to "

// wipesOut returns Argo CD's SyncError condition when an automated sync
// with prune would delete every resource of the app (its source now
// renders nothing) and allowEmpty is not set, and nil otherwise.
func wipesOut(app *v1alpha1.Application, comp *comparison) *v1alpha1.ApplicationCondition {
	pol := app.Spec.SyncPolicy
	if pol == nil || pol.Automated == nil || !pol.Automated.Prune || pol.Automated.AllowEmpty || len(comp.Desired) > 0 || len(comp.Prune) == 0 {
		return nil
	}
	return &v1alpha1.ApplicationCondition{Type: v1alpha1.ApplicationConditionSyncError,
		Message: skipMessagePrefix + app.Status.Sync.Revision + ": auto-sync will wipe out all resources", LastTransitionTime: ptrNow()}
}

// setSkipCondition replaces the SyncError of a skipped automated sync in
// conds with cond (none when nil), keeping the time of an unchanged one.
func setSkipCondition(conds []v1alpha1.ApplicationCondition, cond *v1alpha1.ApplicationCondition) []v1alpha1.ApplicationCondition {
	var out []v1alpha1.ApplicationCondition
	for _, c := range conds {
		if c.Type == v1alpha1.ApplicationConditionSyncError && strings.HasPrefix(c.Message, skipMessagePrefix) {
			if cond != nil && c.Message == cond.Message {
				cond.LastTransitionTime = c.LastTransitionTime
			}
			continue
		}
		out = append(out, c)
	}
	if cond != nil {
		out = append(out, *cond)
	}
	return out
}

// alreadySynced reports whether a sync result is of the app's current
// revisions and sources, as Argo CD decides whether an automated sync was
// attempted already: a change of the spec's source (an image override
// written by the image updater, say) calls for a new one.
func alreadySynced(app *v1alpha1.Application, res *v1alpha1.SyncOperationResult) bool {
	if len(app.Spec.Sources) > 0 {
		return slices.Equal(res.Revisions, app.Status.Sync.Revisions) && equality.Semantic.DeepEqual(res.Sources, app.Spec.Sources)
	}
	src := app.Spec.SingleSource()
	return res.Revision == app.Status.Sync.Revision && src != nil && equality.Semantic.DeepEqual(res.Source, *src)
}

// runOperation syncs and records the result, with the comparison that
// led to it, in one write that also clears the operation.
//
// fresh is set for an automated sync the journal took just now, rather
// than one it holds from a run cut short.
func (r *reconciler) runOperation(ctx context.Context, app *v1alpha1.Application, status *statusWriter, op *v1alpha1.Operation, comp *comparison, checker *health.Checker, retryCount int64, fresh bool) error {
	started := metav1.Now()
	var done []*v1alpha1.ResourceResult
	resumed := false
	if st := app.Status.OperationState; st != nil && st.Phase == v1alpha1.OperationRunning {
		if retryCount > 0 {
			started = st.StartedAt
		}
		if st.SyncResult != nil && st.RetryCount == retryCount && equality.Semantic.DeepEqual(st.Operation, *op) {
			// The same attempt, cut short: resume it.
			started, done, resumed = st.StartedAt, st.SyncResult.Resources, true
		}
	}
	journaled := r.journalable(app, op)
	if e, ok := r.journal.pending(app); ok && journaled && equality.Semantic.DeepEqual(e.Operation, *op) {
		started, resumed = e.StartedAt, !fresh // resumed: an automated sync cut short
	}
	ended := terminating(app)
	app.Status.OperationState = &v1alpha1.OperationState{Operation: *op, Phase: v1alpha1.OperationRunning, Message: "syncing", StartedAt: started, RetryCount: retryCount}
	if ended { // terminated before it began
		return r.finishOperation(ctx, app, status, op, started, &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationFailed, Message: terminatedMessage}, refused: true}, checker)
	}
	syncCtx, cancelSync := context.WithCancel(ctx)
	defer cancelSync()
	terminated := r.watchTermination(syncCtx, app, cancelSync)
	timedOut := r.syncDeadline(started, cancelSync)
	defer timedOut.stop()
	progress := &progressWriter{r: r, app: app, status: status, op: op, resumed: resumed}
	if !op.Sync.DryRun {
		if err := r.recordStart(ctx, app, journaled, progress, done); err != nil {
			return fmt.Errorf("recording the start of the sync of Application/%s/%s: %w", app.Namespace, app.Name, err)
		}
	}
	res := r.sync(syncCtx, app, op, comp, checker, done, progress.checkpoint)
	if terminated.Load() || timedOut.passed.Load() {
		stopped := *res.Result
		stopped.Phase, stopped.Message, stopped.Interrupted = v1alpha1.OperationFailed, terminatedMessage, false
		if !terminated.Load() {
			stopped.Message = fmt.Sprintf("%s: the sync timeout (%s) passed", terminatedMessage, r.opts.SyncTimeout)
		}
		res = &operationResult{Result: &stopped, comp: res.comp, refused: true}
	}
	if res.AwaitingConfirmation {
		// Running, saying what it waits for; the approval (an update of
		// the Application) resumes it.
		progress.message = res.Message
		return progress.checkpoint(ctx, res.Result, true)
	}
	if res.Interrupted {
		// Not finished: the Running state (or the operation) stays, and
		// the next reconcile resumes it.
		return fmt.Errorf("sync of Application/%s/%s interrupted: %s", app.Namespace, app.Name, res.Message)
	}
	return r.finishOperation(ctx, app, status, op, started, res, checker)
}

// journalable reports whether a sync's start goes in the journal rather
// than in a Running state on its Application: an automated sync (no
// operation on the Application says it was asked for) without a Running
// state already.
func (r *reconciler) journalable(app *v1alpha1.Application, op *v1alpha1.Operation) bool {
	st := app.Status.OperationState
	return op.InitiatedBy.Automated && app.Operation == nil && !op.Sync.DryRun && (st == nil || st.Phase != v1alpha1.OperationRunning)
}

// recordStart makes a sync's start durable before it changes anything: in
// the journal when journaled (its Running state is then written only
// before a hook is created, or every progressInterval while it waits), and
// otherwise, or when the journal cannot be written, as a Running state.
func (r *reconciler) recordStart(ctx context.Context, app *v1alpha1.Application, journaled bool, progress *progressWriter, done []*v1alpha1.ResourceResult) error {
	if journaled {
		if _, ok := r.journal.pending(app); !ok {
			r.journal.add(app, progress.op) // decided on before a restart
		}
		err := r.journal.stored(ctx)
		if err == nil {
			progress.started()
			return nil
		}
		if !errors.Is(err, errJournalRefused) { // said once, when it was refused
			r.opts.Log.Warn("Recording the sync's Running state on the Application instead of the journal",
				"application", app.Namespace+"/"+app.Name, "error", err)
		}
	}
	return progress.checkpoint(ctx, &apply.Result{Resources: done}, true)
}

// progressWriter records a running sync's progress in its Application's
// status.operationState: when forced (at the start, around hooks), and
// otherwise every progressInterval.
type progressWriter struct {
	r       *reconciler
	app     *v1alpha1.Application
	status  *statusWriter
	op      *v1alpha1.Operation
	since   time.Time // the last write
	wrote   bool
	resumed bool
	// message, if set, is what the operation waits for.
	message string
}

func (p *progressWriter) checkpoint(ctx context.Context, res *apply.Result, force bool) error {
	if !force && time.Since(p.since) < progressInterval {
		return nil
	}
	st := p.app.Status.OperationState
	st.Message = "syncing"
	if p.resumed {
		st.Message = "syncing (resumed after the controller restarted)"
	}
	if p.message != "" {
		st.Message = p.message
	}
	st.SyncResult = &v1alpha1.SyncOperationResult{Resources: res.Resources}
	err := p.status.write(ctx, p.app)
	st.SyncResult = nil // the results are the sync's, and change after this
	if err != nil {
		if !force {
			p.r.opts.Log.Error("recording the running operation", "application", p.app.Namespace+"/"+p.app.Name, "error", err)
		}
		return err
	}
	p.started()
	return nil
}

// started notes that the sync's start is recorded, announcing it the
// first time.
func (p *progressWriter) started() {
	if !p.wrote {
		p.r.events.Eventf(p.app, nil, corev1.EventTypeNormal, "OperationStarted", "Sync", "%s", startMessage(p.op))
	}
	p.wrote, p.since = true, time.Now()
}

// terminatedMessage ends an operation a user terminated, as in Argo CD.
const terminatedMessage = "Operation terminated"

// terminationPoll is how often a running sync checks whether a user asked
// to terminate it (the API sets its phase to Terminating).
const terminationPoll = 250 * time.Millisecond

// watchTermination cancels a running sync once its Application's
// operation phase becomes Terminating, and reports whether it did.
func (r *reconciler) watchTermination(ctx context.Context, app *v1alpha1.Application, cancel context.CancelFunc) *atomic.Bool {
	terminated := &atomic.Bool{}
	key := client.ObjectKeyFromObject(app)
	go func() {
		tick := time.NewTicker(terminationPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			fresh := &v1alpha1.Application{}
			if err := r.client.Get(ctx, key, fresh); err != nil {
				continue
			}
			if st := fresh.Status.OperationState; st != nil && st.Phase == v1alpha1.OperationTerminating {
				terminated.Store(true)
				cancel()
				return
			}
		}
	}()
	return terminated
}

// deadline ends a sync when the sync timeout passes.
type deadline struct {
	timer  *time.Timer
	passed atomic.Bool
}

func (d *deadline) stop() {
	if d.timer != nil {
		d.timer.Stop()
	}
}

// syncDeadline cancels a sync that started at started once the sync
// timeout (Options.SyncTimeout, counted across retries) passes.
func (r *reconciler) syncDeadline(started metav1.Time, cancel context.CancelFunc) *deadline {
	d := &deadline{}
	if r.opts.SyncTimeout > 0 {
		d.timer = time.AfterFunc(time.Until(started.Add(r.opts.SyncTimeout)), func() {
			d.passed.Store(true)
			cancel()
		})
	}
	return d
}

// sync runs one sync operation; comp is the spec's comparison, done the
// results of an interrupted run of it, and checkpoint records progress.
func (r *reconciler) sync(ctx context.Context, app *v1alpha1.Application, op *v1alpha1.Operation, comp *comparison, checker *health.Checker,
	done []*v1alpha1.ResourceResult, checkpoint func(context.Context, *apply.Result, bool) error) *operationResult {
	if msg := automatedConflict(app, op); msg != "" {
		return &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationError, Message: msg}, refused: true}
	}
	// A sync to another revision or source (a rollback) renders that, and
	// a user's sync resolves branches and tags afresh.
	at := operationTarget(op.Sync, app)
	if at == nil && !op.InitiatedBy.Automated {
		at = &target{}
	}
	if len(op.Sync.Manifests) > 0 {
		objs, err := localManifests(op.Sync.Manifests)
		if err != nil {
			return &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationError, Message: err.Error()}, refused: true}
		}
		at = &target{manifests: objs}
	}
	if at != nil {
		at.fresh = !op.InitiatedBy.Automated
		var cond *v1alpha1.ApplicationCondition
		if comp, cond = r.compare(ctx, app, checker, at, nil); cond != nil {
			return &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationError, Message: cond.Message, Interrupted: ctx.Err() != nil}}
		}
	}
	opts, err := apply.ParseOptionList(append(append([]string{}, app.Spec.GetSyncOptions()...), op.Sync.SyncOptions...))
	if err != nil {
		return &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationError, Message: err.Error()}, comp: comp}
	}
	objs := append([]*unstructured.Unstructured{}, comp.Desired...)
	if op.Sync.SyncStrategy.RunsHooks() {
		objs = append(objs, comp.Hooks...)
	}
	desired, prune := selectResources(op.Sync.Resources, objs, comp.Prune)
	if opts.ApplyOutOfSyncOnly {
		desired = outOfSyncOnly(desired, comp)
	}
	if opts.RespectIgnoreDiff {
		if desired, err = keepIgnored(desired, comp, app.Spec.IgnoreDifferences, r.opts.IgnoreJQTimeout); err != nil {
			return &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationError, Message: err.Error()}, comp: comp}
		}
	}
	if msg := refusal(comp, desired, prune, opts); msg != "" {
		return &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationFailed, Message: msg}, comp: comp}
	}
	plan, err := apply.NewPlan(desired)
	if err != nil {
		return &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationError, Message: err.Error()}, comp: comp}
	}
	client, err := r.syncClient(ctx, app, comp)
	if err != nil {
		return &operationResult{Result: &apply.Result{Phase: v1alpha1.OperationFailed, Message: err.Error()}, comp: comp}
	}
	applier := &apply.Applier{Client: client, Mapper: comp.dest.Mapper, Health: checker, FieldManager: engine.FieldManager, Tracking: r.tracking,
		WaveDelay: r.opts.SyncWaveDelay, Limit: r.writes}
	var nsMeta *v1alpha1.ManagedNamespaceMetadata
	if app.Spec.SyncPolicy != nil {
		nsMeta = app.Spec.SyncPolicy.ManagedNamespaceMetadata
	}
	res := applier.Run(ctx, &apply.Request{
		App: r.appKey(app), Namespace: app.Spec.Destination.Namespace, NamespaceMetadata: nsMeta, Plan: plan,
		Prune: prune, AllowPrune: op.Sync.Prune, DryRun: op.Sync.DryRun, Force: op.Sync.SyncStrategy.Forced(), Options: opts,
		DeletionApproved: deletionApproved(app, app.Status.OperationState.StartedAt.Time),
		Done:             done, Checkpoint: checkpoint,
	})
	for _, a := range res.Applied {
		comp.dest.Differ.Record(a.Sent, a.Live)
	}
	return &operationResult{Result: res, comp: comp}
}

// localManifests parses the documents of a sync of local manifests.
func localManifests(docs []string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for i, doc := range docs {
		parsed, err := manifest.Parse(fmt.Sprintf("local manifest %d", i+1), []byte(doc))
		if err != nil {
			return nil, fmt.Errorf("local manifests: %w", err)
		}
		objs = append(objs, parsed...)
	}
	return objs, nil
}

// automatedConflict refuses, as Argo CD does, a user's rollback or sync to
// another revision while automated sync is on: the automated sync would
// undo it at once.
func automatedConflict(app *v1alpha1.Application, op *v1alpha1.Operation) string {
	pol := app.Spec.SyncPolicy
	if op.InitiatedBy.Automated || op.Sync.DryRun || !pol.IsAutomatedSyncEnabled() {
		return ""
	}
	if op.Sync.Source != nil || len(op.Sync.Sources) > 0 {
		return "rollback cannot be initiated when auto-sync is enabled"
	}
	if app.Spec.Source != nil && op.Sync.Revision != "" && op.Sync.Revision != app.Spec.Source.TargetRevision && op.Sync.Revision != app.Status.Sync.Revision {
		return fmt.Sprintf("cannot sync to %s: auto-sync currently set to %s", op.Sync.Revision, cmp.Or(app.Spec.Source.TargetRevision, "HEAD"))
	}
	return ""
}

// refusal is why a sync may not start, checked before anything is
// applied: an object the project does not permit, or (with
// FailOnSharedResource=true) an object another Application tracks.
func refusal(comp *comparison, desired, prune []*unstructured.Unstructured, opts apply.Options) string {
	var reasons []string
	for _, obj := range append(append([]*unstructured.Unstructured{}, desired...), prune...) {
		if why, ok := comp.Denied[engine.KeyOf(obj)]; ok {
			reasons = append(reasons, why)
		}
	}
	if len(reasons) > 0 {
		return "one or more synchronization tasks are not valid: " + strings.Join(reasons, "; ")
	}
	if opts.FailOnSharedResource && len(comp.Shared) > 0 {
		return "shared resource found: " + strings.Join(comp.Shared, "; ")
	}
	return ""
}

// operationResult is a sync's result and the comparison it synced (nil
// when it could not render).
type operationResult struct {
	*apply.Result
	comp *comparison
	// refused is set when the operation was not allowed at all: retrying
	// cannot help.
	refused bool
}

// finishOperation records the result with a fresh comparison of the spec
// (seeing what the sync applied and pruned), appends to the history after
// a successful sync, and clears the requested operation.
func (r *reconciler) finishOperation(ctx context.Context, app *v1alpha1.Application, status *statusWriter, op *v1alpha1.Operation, started metav1.Time, res *operationResult, checker *health.Checker) error {
	finished := metav1.Now()
	retryCount := app.Status.OperationState.RetryCount
	if !op.Sync.DryRun && res.comp != nil {
		after, condition := r.compare(ctx, app, checker, nil, newSynced(res.Result))
		r.writeComparison(app, after, condition)
	}
	if (res.Phase == v1alpha1.OperationFailed || res.Phase == v1alpha1.OperationError) && !res.refused {
		if backoff, ok := retryAfter(retryStrategy(app, op), retryCount); ok && ctx.Err() == nil {
			app.Status.OperationState = &v1alpha1.OperationState{Operation: *op, Phase: v1alpha1.OperationRunning, StartedAt: started,
				Message: fmt.Sprintf("Retrying attempt #%d at %s: %s", retryCount+1, finished.Add(backoff).Format(time.Kitchen), res.Message), RetryCount: retryCount + 1}
			r.retries.set(r.appKey(app), backoff)
			if err := status.write(ctx, app); err != nil {
				return err
			}
			r.journal.end(app.Namespace, app.Name) // the Running state takes over
			return nil
		}
	}
	state := &v1alpha1.OperationState{Operation: *op, Phase: res.Phase, Message: res.Message, StartedAt: started, FinishedAt: &finished, RetryCount: retryCount}
	if res.comp != nil {
		state.SyncResult = &v1alpha1.SyncOperationResult{Resources: res.Resources}
		if len(app.Spec.Sources) > 0 {
			state.SyncResult.Sources = app.Spec.Sources
			for _, s := range res.comp.render.Sources {
				state.SyncResult.Revisions = append(state.SyncResult.Revisions, s.Revision)
			}
		} else if src := app.Spec.SingleSource(); src != nil && len(res.comp.render.Sources) == 1 {
			state.SyncResult.Source = *src
			if op.Sync.Source != nil { // a rollback records what it deployed
				state.SyncResult.Source = *op.Sync.Source
			}
			state.SyncResult.Revision = res.comp.render.Sources[0].Revision
		}
	}
	app.Status.OperationState = state
	// A sync of local manifests deployed nothing a revision names.
	if res.Phase == v1alpha1.OperationSucceeded && !op.Sync.DryRun && state.SyncResult != nil && len(op.Sync.Manifests) == 0 {
		appendHistory(app, state, started, op.InitiatedBy)
	}
	app.Status.Conditions = syncErrorCondition(app.Status.Conditions, op, state)
	if err := status.finish(ctx, app, op); err != nil {
		return err
	}
	r.journal.end(app.Namespace, app.Name)
	r.recordCompletion(app, op, state)
	r.metrics.IncSync(app, state.Phase)
	return nil
}

// syncErrorCondition sets a SyncError condition after a failed automated
// sync, as Argo CD does, and drops it after a successful sync.
func syncErrorCondition(conds []v1alpha1.ApplicationCondition, op *v1alpha1.Operation, state *v1alpha1.OperationState) []v1alpha1.ApplicationCondition {
	var out []v1alpha1.ApplicationCondition
	for _, c := range conds {
		if c.Type != v1alpha1.ApplicationConditionSyncError {
			out = append(out, c)
		}
	}
	if op.InitiatedBy.Automated && (state.Phase == v1alpha1.OperationFailed || state.Phase == v1alpha1.OperationError) {
		rev := op.Sync.Revision
		if state.SyncResult != nil && state.SyncResult.Revision != "" {
			rev = state.SyncResult.Revision
		}
		out = append(out, v1alpha1.ApplicationCondition{Type: v1alpha1.ApplicationConditionSyncError,
			Message: fmt.Sprintf("Failed sync attempt to %s: %s", rev, state.Message), LastTransitionTime: state.FinishedAt})
	}
	return out
}

// startMessage describes an operation as it starts.
func startMessage(op *v1alpha1.Operation) string {
	who := "sync"
	if op.InitiatedBy.Automated {
		who = "automated sync"
	}
	return fmt.Sprintf("Initiated %s to '%s'", who, cmp.Or(op.Sync.Revision, "HEAD"))
}

// recordCompletion records an Event on the Application for a finished
// operation: one per sync (and one as it starts), so Events stay cheap at
// scale.
func (r *reconciler) recordCompletion(app *v1alpha1.Application, op *v1alpha1.Operation, state *v1alpha1.OperationState) {
	rev := op.Sync.Revision
	if state.SyncResult != nil && state.SyncResult.Revision != "" {
		rev = state.SyncResult.Revision
	}
	what := "Sync operation"
	if op.InitiatedBy.Automated {
		what = "Automated sync operation"
	}
	if state.Phase == v1alpha1.OperationSucceeded {
		r.events.Eventf(app, nil, corev1.EventTypeNormal, "OperationCompleted", "Sync", "%s to %s succeeded", what, cmp.Or(rev, "HEAD"))
		return
	}
	r.events.Eventf(app, nil, corev1.EventTypeWarning, "OperationCompleted", "Sync", "%s to %s %s: %s", what, cmp.Or(rev, "HEAD"), strings.ToLower(string(state.Phase)), state.Message)
}

// synced is what a sync just applied and pruned, which the watches may
// not have seen yet.
type synced struct {
	live map[engine.ObjectKey]*unstructured.Unstructured
	gone map[engine.ObjectKey]bool
}

func newSynced(res *apply.Result) *synced {
	s := &synced{live: map[engine.ObjectKey]*unstructured.Unstructured{}, gone: map[engine.ObjectKey]bool{}}
	for _, a := range res.Applied {
		s.live[engine.KeyOf(a.Live)] = a.Live
	}
	for _, obj := range res.Pruned {
		s.gone[engine.KeyOf(obj)] = true
	}
	return s
}

// over returns live as the sync left it: its objects in place of older
// versions the watches hold, and the pruned ones gone.
func (s *synced) over(live engine.LiveReader) engine.LiveReader {
	if s == nil {
		return live
	}
	return afterSync{LiveReader: live, s: s}
}

type afterSync struct {
	engine.LiveReader
	s *synced
}

func (a afterSync) Tracked(ctx context.Context, app string, kinds []schema.GroupVersionKind, known []v1alpha1.ResourceStatus) (map[engine.ObjectKey]*unstructured.Unstructured, error) {
	live, err := a.LiveReader.Tracked(ctx, app, kinds, known)
	if err != nil {
		return nil, err
	}
	for k := range a.s.gone {
		delete(live, k)
	}
	for k, obj := range a.s.live {
		if cur, ok := live[k]; ok && newerVersion(cur, obj) {
			continue
		}
		live[k] = obj
	}
	return live, nil
}

func (a afterSync) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	if a.s.gone[engine.ObjectKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}] {
		return nil, nil
	}
	return a.LiveReader.Get(ctx, gvk, namespace, name)
}

// newerVersion reports whether a is a later version of the same object
// than b. Resource versions are opaque, but the API server's are etcd
// revisions; anything else is never taken as newer.
func newerVersion(a, b *unstructured.Unstructured) bool {
	if a.GetUID() != b.GetUID() {
		return false
	}
	x, errA := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
	y, errB := strconv.ParseUint(b.GetResourceVersion(), 10, 64)
	return errA == nil && errB == nil && x > y
}

func appendHistory(app *v1alpha1.Application, state *v1alpha1.OperationState, started metav1.Time, by v1alpha1.OperationInitiator) {
	var id int64
	for _, h := range app.Status.History {
		id = max(id, h.ID+1)
	}
	app.Status.History = append(app.Status.History, v1alpha1.RevisionHistory{
		ID: id, Revision: state.SyncResult.Revision, Revisions: state.SyncResult.Revisions,
		Source: state.SyncResult.Source, Sources: state.SyncResult.Sources,
		DeployedAt: *state.FinishedAt, DeployStartedAt: &started, InitiatedBy: by,
	})
	limit := int64(defaultHistoryLimit)
	if app.Spec.RevisionHistoryLimit != nil {
		limit = *app.Spec.RevisionHistoryLimit
	}
	if n := int64(len(app.Status.History)); n > limit {
		app.Status.History = app.Status.History[n-limit:]
	}
}

// operationTarget is what a sync operation asks to render, when it is not
// the spec's current sources at their compared revisions.
func operationTarget(s *v1alpha1.SyncOperation, app *v1alpha1.Application) *target {
	at := &target{}
	switch {
	case len(s.Sources) > 0:
		at.sources = s.Sources
	case s.Source != nil:
		at.sources = []v1alpha1.ApplicationSource{*s.Source}
	}
	switch {
	case len(s.Revisions) > 0:
		at.revisions = s.Revisions
	case s.Revision != "":
		at.revisions = []string{s.Revision}
	}
	if at.sources == nil && (at.revisions == nil || sameRevisions(at.revisions, app)) {
		return nil
	}
	return at
}

func sameRevisions(revs []string, app *v1alpha1.Application) bool {
	if len(app.Spec.Sources) > 0 {
		if len(revs) != len(app.Status.Sync.Revisions) {
			return false
		}
		for i := range revs {
			if revs[i] != app.Status.Sync.Revisions[i] {
				return false
			}
		}
		return true
	}
	return len(revs) == 1 && revs[0] == app.Status.Sync.Revision
}

// selectResources keeps the named resources of a selective sync.
func selectResources(names []v1alpha1.SyncOperationResource, desired, prune []*unstructured.Unstructured) ([]*unstructured.Unstructured, []*unstructured.Unstructured) {
	if len(names) == 0 {
		return desired, prune
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n.Group+"/"+n.Kind+"/"+n.Namespace+"/"+n.Name] = true
		if n.Namespace == "" {
			want[n.Group+"/"+n.Kind+"/*/"+n.Name] = true
		}
	}
	keep := func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			if want[engine.KeyOf(o).String()] || want[gvk.Group+"/"+gvk.Kind+"/*/"+o.GetName()] {
				out = append(out, o)
			}
		}
		return out
	}
	return keep(desired), keep(prune)
}

func outOfSyncOnly(desired []*unstructured.Unstructured, comp *comparison) []*unstructured.Unstructured {
	inSync := map[engine.ObjectKey]bool{}
	for _, res := range comp.Resources {
		if res.Status == v1alpha1.SyncStatusCodeSynced {
			inSync[res.Key] = true
		}
	}
	var out []*unstructured.Unstructured
	for _, o := range desired {
		if !inSync[engine.KeyOf(o)] || isHook(o) {
			out = append(out, o)
		}
	}
	return out
}

// keepIgnored gives each desired object the live values of the fields
// ignoreDifferences ignores (RespectIgnoreDifferences=true).
func keepIgnored(desired []*unstructured.Unstructured, comp *comparison, ignore []v1alpha1.ResourceIgnoreDifferences, jqTimeout time.Duration) ([]*unstructured.Unstructured, error) {
	live := map[engine.ObjectKey]*unstructured.Unstructured{}
	for _, res := range comp.Resources {
		live[res.Key] = res.Live
	}
	out := make([]*unstructured.Unstructured, len(desired))
	for i, obj := range desired {
		kept, err := diff.KeepIgnored(obj, live[engine.KeyOf(obj)], ignore, jqTimeout)
		if err != nil {
			return nil, err
		}
		out[i] = kept
	}
	return out, nil
}

// deletionApproved reports whether the Application's deletion-approved
// annotation approves deleting, from since on, the resources that ask
// for confirmation (argocd app confirm-deletion sets it to the time).
func deletionApproved(app *v1alpha1.Application, since time.Time) bool {
	at, err := time.Parse(time.RFC3339, app.Annotations[v1alpha1.AnnotationDeletionApproved])
	return err == nil && !at.Before(since.Truncate(time.Second))
}

// writeLimit is the bound Options.WriteParallelism asks for; nil (no
// bound) when it is not positive.
func writeLimit(n int) *semaphore.Weighted {
	if n <= 0 {
		return nil
	}
	return semaphore.NewWeighted(int64(n))
}
