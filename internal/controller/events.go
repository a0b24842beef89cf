package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
)

// eventComponent is the source of the controller's Events, as Argo CD's.
const eventComponent = "argocd-application-controller"

// newEventRecorder records the controller's Events as Argo CD's does: core
// Events through client-go's record package, which never blocks a sync
// (a full queue drops the Event), limits each Application's Events with
// its spam filter, and remembers recent Events in a bounded cache, where
// the events.k8s.io broadcaster keeps every Event of the last six minutes
// in memory (tens of MiB when thousands of apps sync).
func newEventRecorder(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) (events.EventRecorder, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := record.NewBroadcaster(record.WithContext(ctx)) // shut down when ctx ends
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	return coreRecorder{b.NewRecorder(scheme, corev1.EventSource{Component: eventComponent})}, nil
}

// coreRecorder is a record.EventRecorder behind the events.EventRecorder
// interface the reconciler uses; core Events have no action nor related
// object.
type coreRecorder struct {
	rec record.EventRecorder
}

func (c coreRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	c.rec.Eventf(regarding, eventtype, reason, note, args...)
}
