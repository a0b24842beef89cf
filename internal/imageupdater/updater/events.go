package updater

import (
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/capstan-cd/capstan/internal/kube"
)

// flushTimeout bounds how long stopping waits for Events still being
// written.
const flushTimeout = 5 * time.Second

// NewEventRecorder records Events as argocd-image-updater; stop waits
// for the Events recorded so far to be written (a run with --once exits
// right after its last one), then stops.
func NewEventRecorder(cfg *rest.Config) (rec EventRecorder, stop func(), err error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	scheme, err := kube.NewScheme()
	if err != nil {
		return nil, nil, err
	}
	var recorded, written atomic.Int64
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&countingSink{EventSink: &typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}, written: &written})
	r := &countingRecorder{EventRecorder: b.NewRecorder(scheme, corev1.EventSource{Component: "argocd-image-updater"}), recorded: &recorded}
	stop = func() {
		// An Event the correlator drops as spam is never written: the
		// wait is bounded.
		for deadline := time.Now().Add(flushTimeout); written.Load() < recorded.Load() && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		b.Shutdown()
	}
	return r, stop, nil
}

// countingRecorder counts the Events recorded.
type countingRecorder struct {
	record.EventRecorder
	recorded *atomic.Int64
}

func (r *countingRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.recorded.Add(1)
	r.EventRecorder.Eventf(object, eventtype, reason, messageFmt, args...)
}

// countingSink counts the Events written (created, or merged into an
// earlier one).
type countingSink struct {
	record.EventSink
	written *atomic.Int64
}

func (s *countingSink) Create(e *corev1.Event) (*corev1.Event, error) {
	out, err := s.EventSink.Create(e)
	s.written.Add(1)
	return out, err
}

func (s *countingSink) Update(e *corev1.Event) (*corev1.Event, error) {
	out, err := s.EventSink.Update(e)
	s.written.Add(1)
	return out, err
}

func (s *countingSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	out, err := s.EventSink.Patch(e, data)
	s.written.Add(1)
	return out, err
}
