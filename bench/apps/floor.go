package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// floorConcurrencies are the numbers of requests in flight the floor
// tries; it takes the best.
var floorConcurrencies = []int{8, 16, 32}

// measureFloor times, with no controller, what the API server needs for
// the writes any controller must make for n one-ConfigMap apps: creating
// the Applications, then for each an apply of its ConfigMap, a status
// write like Capstan's and an Event, with the bench's watch of the
// Applications open as in the controller's run. It tries each of the
// concurrencies (floorConcurrencies when none), each in namespaces of its
// own, and returns the best time and the concurrency that made it.
func measureFloor(ctx context.Context, n int, concurrencies ...int) (time.Duration, int, error) {
	if len(concurrencies) == 0 {
		concurrencies = floorConcurrencies
	}
	s, err := newSite(ctx, n)
	if err != nil {
		return 0, 0, err
	}
	defer s.close()
	kc, err := kubernetes.NewForConfig(s.own)
	if err != nil {
		return 0, 0, err
	}
	var best time.Duration
	var at int
	for _, workers := range concurrencies {
		w := s.workload(fmt.Sprintf("floor-%d", workers), fmt.Sprintf("floor-%d-apps", workers))
		total, err := floorTry(ctx, s, kc, w, n, workers)
		if err != nil {
			return 0, 0, err
		}
		if best == 0 || total < best {
			best, at = total, workers
		}
	}
	with := ""
	if floorWatches {
		with = ", with a controller's watches open"
	}
	fmt.Printf("floor%s: %s (the best, %d at a time)\n", with, best.Round(time.Millisecond), at)
	return best, at, nil
}

// floorTry times the floor's writes made workers at a time.
func floorTry(ctx context.Context, s *site, kc kubernetes.Interface, w workload, n, workers int) (time.Duration, error) {
	if err := s.namespaces(ctx, w.ns, w.dest); err != nil {
		return 0, err
	}
	if err := s.register(ctx, w.ns, w.dest); err != nil {
		return 0, err
	}
	// The same watcher of the Applications as the controller's run has:
	// the API server serves it either way.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if _, err := appCache(watchCtx, s, w.ns); err != nil {
		return 0, err
	}
	if floorWatches {
		if err := controllerWatches(watchCtx, s); err != nil {
			return 0, err
		}
	}
	cpu := s.cpuMeter(func() float64 { sec, _ := cpuSeconds(os.Getpid()); return sec }, fmt.Printf, n)
	start := time.Now()
	if err := w.create(ctx, s.client, n, workers); err != nil {
		return 0, err
	}
	created := time.Since(start)
	writes := time.Now()
	if err := parallel(n, workers, func(i int) error {
		dest := kc
		if d := s.destOf(i); d != nil {
			dest = d.client
		}
		return w.floorWrites(ctx, s.client, dest, kc, i)
	}); err != nil {
		return 0, err
	}
	total := time.Since(start)
	fmt.Printf("floor: apps=%d, %d at a time: created in %s, then ConfigMap applies, status writes and Events in %s; %s in all\n",
		n, workers, created.Round(time.Millisecond), time.Since(writes).Round(time.Millisecond), total.Round(time.Millisecond))
	cpu()
	return total, nil
}

// floorWrites makes the writes a sync of the i-th app needs at least: an
// apply of its ConfigMap to its destination (dest), one status write and
// one Event (kc, the control cluster).
func (w workload) floorWrites(ctx context.Context, c client.Client, dest, kc kubernetes.Interface, i int) error {
	name := fmt.Sprintf("app-%05d", i)
	cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"annotations":{%q:%q}},"data":{"value":"one"}}`,
		name, w.dest, v1alpha1.AnnotationTrackingID, name+":/ConfigMap:"+w.dest+"/"+name)
	force := true
	if _, err := dest.CoreV1().ConfigMaps(w.dest).Patch(ctx, name, types.ApplyPatchType, []byte(cm), metav1.PatchOptions{FieldManager: "capstan", Force: &force}); err != nil {
		return err
	}
	app := w.app(i) // as created: a merge patch needs no read
	orig := app.DeepCopy()
	now := metav1.Now()
	rev := strings.Repeat("a", 40)
	res := v1alpha1.ResourceStatus{Version: "v1", Kind: "ConfigMap", Namespace: w.dest, Name: name, Status: v1alpha1.SyncStatusCodeSynced}
	app.Status = v1alpha1.ApplicationStatus{
		Resources: []v1alpha1.ResourceStatus{res}, ReconciledAt: &now, SourceType: v1alpha1.SourceTypeDirectory,
		Sync:   v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: rev, ComparedTo: v1alpha1.ComparedTo{Source: *app.Spec.Source, Destination: app.Spec.Destination}},
		Health: v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusHealthy, LastTransitionTime: &now},
		OperationState: &v1alpha1.OperationState{Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: rev}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}},
			Phase: v1alpha1.OperationSucceeded, Message: "successfully synced (all tasks run)", StartedAt: now, FinishedAt: &now,
			SyncResult: &v1alpha1.SyncOperationResult{Revision: rev, Source: *app.Spec.Source,
				Resources: []*v1alpha1.ResourceResult{{Version: "v1", Kind: "ConfigMap", Namespace: w.dest, Name: name, Status: v1alpha1.ResultCodeSynced, Message: "applied", SyncPhase: v1alpha1.SyncPhaseSync}}}},
		History: []v1alpha1.RevisionHistory{{ID: 0, Revision: rev, Source: *app.Spec.Source, DeployedAt: now, DeployStartedAt: &now, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}},
	}
	if err := c.Patch(ctx, app, client.MergeFrom(orig)); err != nil {
		return err
	}
	_, err := kc.EventsV1().Events(w.ns).Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}, EventTime: metav1.NewMicroTime(time.Now()),
		ReportingController: "bench", ReportingInstance: "bench", Action: "Sync", Reason: "OperationCompleted", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Application", Namespace: w.ns, Name: name}, Note: "Automated sync operation succeeded",
	}, metav1.CreateOptions{})
	return err
}

// floorWatches is -floor-watches: the floor also holds the watches a
// controller holds, served by the API server whatever the controller does
// with their events.
var floorWatches bool

// controllerWatches opens the watches the controller holds with events in
// this workload: the Applications, and every ConfigMap (its live state of
// the destination). Their objects are dropped as they arrive.
func controllerWatches(ctx context.Context, s *site) error {
	c, err := ctrlcache.New(s.own, ctrlcache.Options{Scheme: s.client.Scheme(),
		DefaultTransform: func(obj any) (any, error) {
			o, ok := obj.(client.Object)
			if !ok {
				return obj, nil // a deletion's tombstone
			}
			return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName()}}, nil
		}})
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{&v1alpha1.Application{}, &corev1.ConfigMap{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the controller's watches did not sync")
	}
	return nil
}
