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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
)

// eventComponent is the source of the controller's Events, as Argo CD's.
const eventComponent = "argocd-application-controller"

// newEventRecorder records the controller's Events as Argo CD's does: core
// Events through client-go's record package, which never blocks a sync
// (a full queue drops the Event), limits each Application's Events with
// its spam filter, and remembers recent Events in a bounded cache, where
// the events.k8s.io broadcaster keeps every Event of the last six minutes
// in memory (tens of MiB when thousands of apps sync). An Application's
// Events carry the labels argocd-cm asks for (project.EventLabels), read
// through r, the controller's cache.
func newEventRecorder(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, r client.Reader, namespace string) (events.EventRecorder, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := record.NewBroadcaster(record.WithContext(ctx)) // shut down when ctx ends
	sink := &typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}
	b.StartRecordingToSink(labellingSink{EventSink: sink, ctx: ctx, reader: r, namespace: namespace})
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

// labellingSink adds to each new Event about an Application the labels
// argocd-cm asks for. An Application that cannot be read gets none.
type labellingSink struct {
	record.EventSink
	ctx       context.Context
	reader    client.Reader
	namespace string
}

func (s labellingSink) Create(ev *corev1.Event) (*corev1.Event, error) {
	if ref := ev.InvolvedObject; ref.Kind == "Application" && ref.APIVersion == v1alpha1.GroupVersion.String() {
		app := &v1alpha1.Application{}
		if s.reader.Get(s.ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, app) == nil {
			if labels, err := project.EventLabels(s.ctx, s.reader, s.namespace, app); err == nil && len(labels) > 0 {
				ev = ev.DeepCopy()
				ev.Labels = labels
			}
		}
	}
	return s.EventSink.Create(ev)
}
