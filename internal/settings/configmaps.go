package settings

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// InstallConfigMaps are the ConfigMaps an Argo CD install ships, empty
// until someone configures them. Argo CD's CLI in --core mode and its
// admin commands read them and fail when one is missing.
var InstallConfigMaps = []string{
	CMName,
	CmdParamsName,
	"argocd-rbac-cm",
	GPGKeysConfigMap,
	SSHKnownHostsConfigMap,
	TLSCertsConfigMap,
	"argocd-notifications-cm",
}

// EnsureConfigMaps creates each of InstallConfigMaps that is missing in
// namespace, empty and labelled as Argo CD labels them. Existing ones are
// left as they are; a component not allowed to create ConfigMaps leaves
// the job to one that is (the API server) and gets no error.
func EnsureConfigMaps(ctx context.Context, c client.Client, namespace string) error {
	for _, name := range InstallConfigMaps {
		cm := &corev1.ConfigMap{}
		cm.Namespace, cm.Name = namespace, name
		cm.Labels = map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "argocd"}
		err := c.Create(ctx, cm)
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
		case apierrors.IsForbidden(err):
			return nil
		default:
			return fmt.Errorf("creating ConfigMap/%s/%s: %w", namespace, name, err)
		}
	}
	return nil
}
