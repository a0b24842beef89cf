package settings

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadConfigMap reads one of the settings ConfigMaps (argocd-cm,
// argocd-rbac-cm, …) from r, which is usually an informer cache. A
// ConfigMap that does not exist reads as empty, with no resourceVersion:
// Argo CD's defaults apply.
func ReadConfigMap(ctx context.Context, r client.Reader, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return &corev1.ConfigMap{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap/%s/%s: %w", namespace, name, err)
	}
	return cm, nil
}

// ArgoCD is argocd-cm as read.
type ArgoCD struct {
	// Data holds every key; empty when the ConfigMap does not exist.
	Data map[string]string
	// Version is its resourceVersion, "" when it does not exist: what is
	// derived from the settings (compiled health checks) is kept per version.
	Version string
}

// TrackingMethod is application.resourceTrackingMethod; "" means Argo
// CD's default.
func (a *ArgoCD) TrackingMethod() string { return a.Data["application.resourceTrackingMethod"] }

// LoadArgoCD reads argocd-cm from namespace.
func LoadArgoCD(ctx context.Context, r client.Reader, namespace string) (*ArgoCD, error) {
	cm, err := ReadConfigMap(ctx, r, namespace, CMName)
	if err != nil {
		return nil, err
	}
	data := cm.Data
	if data == nil {
		data = map[string]string{}
	}
	return &ArgoCD{Data: data, Version: cm.ResourceVersion}, nil
}
