package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// journalKey is the key of the journal ConfigMap's data that lists the
// automated syncs under way.
const journalKey = "syncs.json"

// journalFlush is how often ended syncs are written out when no new sync
// starts to carry them.
const journalFlush = 10 * time.Second

// journalEntry is an automated sync started and not yet recorded on its
// Application.
type journalEntry struct {
	Namespace string             `json:"namespace"`
	Name      string             `json:"name"`
	Operation v1alpha1.Operation `json:"operation"`
	StartedAt metav1.Time        `json:"startedAt"`
}

// recordedOn reports whether app's status already holds this sync's
// result: the controller stopped after the final write, before the
// journal forgot the sync.
func (e *journalEntry) recordedOn(app *v1alpha1.Application) bool {
	st := app.Status.OperationState
	return st != nil && st.Phase.Completed() && st.StartedAt.Unix() == e.StartedAt.Unix() &&
		equality.Semantic.DeepEqual(st.Operation, e.Operation)
}

// journal records, in one ConfigMap per controller shard, the automated
// syncs under way. An automated sync has no operation on its Application
// to say it was started, and writing a Running state on the Application
// before each one would cost a write of the whole Application. The journal
// is written instead, for all syncs starting at once together (a sync waits
// for the write that includes it, and while one write is under way the
// syncs starting meanwhile gather for the next), so a controller stopped
// after applying and before recording a sync finds it in the journal when
// it starts again and finishes it: the objects applied again (which changes
// nothing already applied) and one result and history entry recorded.
// Syncs with hooks write a Running state before their first hook, as any
// sync does, so no hook runs twice.
type journal struct {
	client client.Client // not a cached one: the journal is read once, at start
	key    types.NamespacedName

	mu      sync.Mutex
	loaded  bool
	entries map[types.NamespacedName]journalEntry
	version uint64 // bumped by every change of entries
	dirty   bool

	refused  atomic.Bool
	writeMu  sync.Mutex // one write at a time; waiters then find theirs done
	written  uint64     // the version the ConfigMap holds
	resource string     // the ConfigMap's resourceVersion, "" when unknown
}

func newJournal(c client.Client, namespace, name string) *journal {
	return &journal{client: c, key: types.NamespacedName{Namespace: namespace, Name: name},
		entries: map[types.NamespacedName]journalEntry{}}
}

// load reads what the last controller left, once.
func (j *journal) load(ctx context.Context) error {
	j.mu.Lock()
	done := j.loaded
	j.mu.Unlock()
	if done {
		return nil
	}
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	j.mu.Lock()
	done = j.loaded
	j.mu.Unlock()
	if done {
		return nil
	}
	cm := &corev1.ConfigMap{}
	err := j.client.Get(ctx, j.key, cm)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the syncs under way from ConfigMap/%s/%s: %w", j.key.Namespace, j.key.Name, err)
	}
	var left []journalEntry
	if err == nil {
		j.resource = cm.ResourceVersion
		if data := cm.Data[journalKey]; data != "" {
			if err := json.Unmarshal([]byte(data), &left); err != nil {
				return fmt.Errorf("reading the syncs under way from ConfigMap/%s/%s: %w", j.key.Namespace, j.key.Name, err)
			}
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.loaded {
		for _, e := range left {
			j.entries[types.NamespacedName{Namespace: e.Namespace, Name: e.Name}] = e
		}
		j.loaded = true
	}
	return nil
}

// pending returns the sync of app left under way, if any.
func (j *journal) pending(app *v1alpha1.Application) (journalEntry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.entries[types.NamespacedName{Namespace: app.Namespace, Name: app.Name}]
	return e, ok
}

// add notes that app's automated sync op is decided on, as of now, unless
// the journal has it already, and reports whether it did. Its record is
// stored by the next write: store waits for it. Syncs are added when
// decided on, before they wait for an operation processor, so the syncs
// waiting share the writes of the syncs starting.
func (j *journal) add(app *v1alpha1.Application, op *v1alpha1.Operation) (added bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	if e, ok := j.entries[key]; ok && equality.Semantic.DeepEqual(e.Operation, *op) {
		return false
	}
	j.entries[key] = journalEntry{Namespace: app.Namespace, Name: app.Name, Operation: *op, StartedAt: metav1.Now()}
	j.version++
	return true
}

// errJournalRefused is returned, once the API server refused a write of
// the journal (a Role without the right to write ConfigMaps, as before
// the journal), by every later call: syncs record their Running state on
// the Application instead, as they did before it.
var errJournalRefused = errors.New("the journal cannot be written")

// stored returns once the journal's record of app's sync is stored.
func (j *journal) stored(ctx context.Context) error {
	if j.refused.Load() {
		return errJournalRefused
	}
	j.mu.Lock()
	want := j.version
	j.mu.Unlock()
	return j.flush(ctx, want)
}

// end forgets app's sync: it is recorded on the Application, or the
// Application is gone. The next write carries it.
func (j *journal) end(namespace, name string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if _, ok := j.entries[key]; ok {
		delete(j.entries, key)
		j.version++
		j.dirty = true
	}
}

// flush writes the journal unless a write already stored version want.
func (j *journal) flush(ctx context.Context, want uint64) error {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	if j.written >= want {
		return nil
	}
	j.mu.Lock()
	list := make([]journalEntry, 0, len(j.entries))
	for _, e := range j.entries {
		list = append(list, e)
	}
	version := j.version
	j.dirty = false
	j.mu.Unlock()
	data, err := json.Marshal(list)
	if err != nil {
		return err
	}
	if err := j.store(ctx, string(data)); err != nil {
		if apierrors.IsForbidden(err) {
			j.refused.Store(true)
		}
		j.mu.Lock()
		j.dirty = true
		j.mu.Unlock()
		return fmt.Errorf("recording the syncs under way in ConfigMap/%s/%s: %w", j.key.Namespace, j.key.Name, err)
	}
	j.written = version
	return nil
}

// store replaces the ConfigMap's list: this controller is its only writer.
func (j *journal) store(ctx context.Context, data string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: j.key.Namespace, Name: j.key.Name, ResourceVersion: j.resource,
		Labels: map[string]string{"app.kubernetes.io/part-of": "argocd", "app.kubernetes.io/component": "application-controller"}},
		Data: map[string]string{journalKey: data}}
	for attempt := 0; ; attempt++ {
		var err error
		if cm.ResourceVersion == "" {
			err = j.client.Create(ctx, cm)
		} else {
			err = j.client.Update(ctx, cm)
		}
		if err == nil {
			j.resource = cm.ResourceVersion
			return nil
		}
		if attempt > 0 || !(apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err)) {
			j.resource = ""
			return err
		}
		current := &corev1.ConfigMap{}
		switch err := j.client.Get(ctx, j.key, current); {
		case apierrors.IsNotFound(err):
			cm.ResourceVersion = ""
		case err != nil:
			return err
		default:
			cm.ResourceVersion = current.ResourceVersion
		}
	}
}

// run writes out ended syncs that no starting sync carried, until ctx ends.
func (j *journal) run(ctx context.Context) {
	tick := time.NewTicker(journalFlush)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		j.mu.Lock()
		dirty, version, loaded := j.dirty, j.version, j.loaded
		j.mu.Unlock()
		if dirty && loaded {
			_ = j.flush(ctx, version) // tried again at the next tick
		}
	}
}
