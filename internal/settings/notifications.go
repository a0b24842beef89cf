package settings

import (
	"context"
	"fmt"
	"slices"
	"strings"

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

// The prefixes of argocd-notifications-cm's named entries.
const (
	NotificationTriggerPrefix  = "trigger."
	NotificationTemplatePrefix = "template."
	NotificationServicePrefix  = "service."
)

// NotificationService splits a service key, service.<type> or
// service.<type>.<name>, into the service's type and the name
// destinations call it by (the type when no name is given); ok is false
// for any other key.
func NotificationService(key string) (typ, name string, ok bool) {
	rest, found := strings.CutPrefix(key, NotificationServicePrefix)
	if !found {
		return "", "", false
	}
	typ, name, named := strings.Cut(rest, ".")
	if !named {
		name = typ
	}
	if typ == "" || name == "" || strings.Contains(name, ".") {
		return "", "", false
	}
	return typ, name, true
}

// Triggers, Templates and Services are the names the ConfigMap defines,
// sorted.
func (n *Notifications) Triggers() []string  { return n.names(NotificationTriggerPrefix) }
func (n *Notifications) Templates() []string { return n.names(NotificationTemplatePrefix) }
func (n *Notifications) Services() []string  { return n.names(NotificationServicePrefix) }

func (n *Notifications) names(prefix string) []string {
	var out []string
	for k := range n.Data {
		if prefix == NotificationServicePrefix {
			if _, name, ok := NotificationService(k); ok {
				out = append(out, name)
			}
			continue
		}
		if name, ok := strings.CutPrefix(k, prefix); ok && name != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
