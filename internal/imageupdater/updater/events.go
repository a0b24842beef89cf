package updater

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/capstan-cd/capstan/internal/kube"
)

// NewEventRecorder records Events as argocd-image-updater; stop flushes
// and stops it.
func NewEventRecorder(cfg *rest.Config) (rec EventRecorder, stop func(), err error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	scheme, err := kube.NewScheme()
	if err != nil {
		return nil, nil, err
	}
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	return b.NewRecorder(scheme, corev1.EventSource{Component: "argocd-image-updater"}), b.Shutdown, nil
}
