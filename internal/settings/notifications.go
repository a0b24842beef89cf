package settings

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The notifications controller's settings objects, with Argo CD's names.
const (
	NotificationsConfigMap = "argocd-notifications-cm"
	NotificationsSecret    = "argocd-notifications-secret"
)

// Notifications is argocd-notifications-cm and argocd-notifications-secret
// as read: the triggers, templates, services and subscriptions are parsed
// by the notifications package, which alone knows their shapes.
type Notifications struct {
	// Data holds every key of the ConfigMap; empty when it does not exist.
	Data map[string]string
	// Secrets holds the Secret's values, which services name as $key.
	Secrets map[string]string
	// Version tells the pair's revision apart ("<cm>/<secret>"
	// resourceVersions): what is compiled from it is kept per Version.
	Version string
}

// LoadNotifications reads the ConfigMap cmName and the Secret secretName
// from namespace (Argo CD's names when empty). Either may be missing.
func LoadNotifications(ctx context.Context, r client.Reader, namespace, cmName, secretName string) (*Notifications, error) {
	if cmName == "" {
		cmName = NotificationsConfigMap
	}
	if secretName == "" {
		secretName = NotificationsSecret
	}
	cm, err := ReadConfigMap(ctx, r, namespace, cmName)
	if err != nil {
		return nil, err
	}
	n := &Notifications{Data: cm.Data, Secrets: map[string]string{}}
	if n.Data == nil {
		n.Data = map[string]string{}
	}
	secret := &corev1.Secret{}
	err = r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("reading Secret/%s/%s: %w", namespace, secretName, err)
	default:
		for k, v := range secret.Data {
			n.Secrets[k] = string(v)
		}
		for k, v := range secret.StringData {
			n.Secrets[k] = v
		}
	}
	n.Version = cm.ResourceVersion + "/" + secret.ResourceVersion
	return n, nil
}
