package settings

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// ErrSecretRefused marks a Secret a tenant-written field may not name: of
// another namespace, or one of the install's own credentials.
var ErrSecretRefused = errors.New("secret refused")

// installSecrets are the Secrets an install keeps its own keys in: the
// session-signing key, the first admin password, the notification
// services' tokens and the image updater's API token. No field an
// object's author writes may name them.
var installSecrets = []string{ServerSecretName, InitialAdminSecretName, NotificationsSecret, "argocd-image-updater-secret", "argocd-redis"}

// credentialTypes are the argocd.argoproj.io/secret-type values of the
// Secrets the install itself hands out by URL and project: repository,
// credential template and cluster Secrets. A tenant reaches them only
// through the rules of those (a URL its project may use), never by name.
var credentialTypes = []string{
	v1alpha1.SecretTypeRepository, v1alpha1.SecretTypeRepoCredentials,
	v1alpha1.SecretTypeRepositoryWrite, v1alpha1.SecretTypeRepoWriteCredentials,
	v1alpha1.SecretTypeCluster,
}

// SecretScope is where a Secret named by a field an object's author
// writes (an Application annotation, an ImageUpdater, an ApplicationSet
// generator, a self-service notification setting) may be read from.
type SecretScope struct {
	// Namespace is the namespace of the object naming the Secret: the
	// only one read unless Also widens it.
	Namespace string
	// Also lists further namespaces an administrator's settings allow
	// ("*": any). Default none.
	Also []string
	// Field names the field in errors (annotation
	// argocd-image-updater.argoproj.io/pull-secret, spec.generators[0]...).
	Field string
}

// Read reads Secret namespace/name for the field, refusing before reading
// a namespace the scope does not reach and after reading a Secret that
// CheckTenantSecret refuses. Errors wrap ErrSecretRefused (or the read's
// error), name the field and the Secret, and never hold a value.
func (s SecretScope) Read(ctx context.Context, r client.Reader, namespace, name string) (*corev1.Secret, error) {
	if namespace == "" {
		namespace = s.Namespace
	}
	if err := s.reaches(namespace); err != nil {
		return nil, err
	}
	var secret corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &secret); err != nil {
		return nil, fmt.Errorf("%s: Secret/%s/%s: %w", s.Field, namespace, name, err)
	}
	if err := CheckTenantSecret(&secret); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Field, err)
	}
	return &secret, nil
}

// reaches refuses a namespace other than the scope's own and those it
// also allows.
func (s SecretScope) reaches(namespace string) error {
	if namespace == s.Namespace || slices.Contains(s.Also, namespace) || slices.Contains(s.Also, "*") {
		return nil
	}
	return fmt.Errorf("%s: %w: Secrets of namespace %s may not be named from namespace %s (only its own)", s.Field, ErrSecretRefused, namespace, s.Namespace)
}

// CheckTenantSecret refuses a Secret that holds the install's own
// credentials: argocd-secret and the install's other key Secrets,
// repository, credential template and cluster Secrets (by their
// argocd.argoproj.io/secret-type label), and service account tokens.
func CheckTenantSecret(s *corev1.Secret) error {
	ref := "Secret/" + s.Namespace + "/" + s.Name
	switch {
	case slices.Contains(installSecrets, s.Name):
		return fmt.Errorf("%w: %s holds the install's own keys", ErrSecretRefused, ref)
	case slices.Contains(credentialTypes, s.Labels[v1alpha1.LabelSecretType]):
		return fmt.Errorf("%w: %s is a %s Secret (label %s), handed out only by URL and project", ErrSecretRefused, ref, s.Labels[v1alpha1.LabelSecretType], v1alpha1.LabelSecretType)
	case s.Type == corev1.SecretTypeServiceAccountToken:
		return fmt.Errorf("%w: %s is a service account token", ErrSecretRefused, ref)
	}
	return nil
}
