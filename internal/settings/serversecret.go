package settings

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/certs"
)

// The Secrets the API server keeps its own state in, with Argo CD's names
// and keys.
const (
	ServerSecretName       = "argocd-secret"
	InitialAdminSecretName = "argocd-initial-admin-secret"

	keySecretKey     = "server.secretkey"
	keyAdminPassword = "admin.password"
	keyAdminMtime    = "admin.passwordMtime"
	keyTLSCert       = "tls.crt"
	keyTLSKey        = "tls.key"
)

// ServerSecret is what the API server needs from argocd-secret.
type ServerSecret struct {
	// SecretKey signs session tokens (server.secretkey).
	SecretKey []byte
	// AdminPasswordHash is the admin account's bcrypt hash (admin.password).
	AdminPasswordHash []byte
	// Certificate serves TLS (tls.crt and tls.key).
	Certificate tls.Certificate
}

// EnsureServerSecret reads argocd-secret in namespace, first filling in
// what a fresh install lacks, as Argo CD's API server does on its first
// start: a random server.secretkey; a random admin password, stored as a
// bcrypt hash, and told once in argocd-initial-admin-secret (key
// "password"); and a self-signed certificate for hosts. Values already
// there are kept, so a user's certificate or password is never replaced.
func EnsureServerSecret(ctx context.Context, c client.Client, namespace string, hosts []string) (*ServerSecret, error) {
	ref := "Secret/" + namespace + "/" + ServerSecretName
	var initialPassword string
	var out *ServerSecret
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ServerSecretName}, s)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading %s: %w", ref, err)
		}
		if !exists {
			s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ServerSecretName, Namespace: namespace,
				Labels: map[string]string{"app.kubernetes.io/name": ServerSecretName, "app.kubernetes.io/part-of": "argocd"}}}
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		changed, password, err := fillServerSecret(s.Data, hosts)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		switch {
		case !exists:
			err = c.Create(ctx, s)
		case changed:
			err = c.Update(ctx, s)
		}
		if err != nil {
			return err // a conflict is retried from a fresh read
		}
		if password != "" {
			initialPassword = password
		}
		out, err = parseServerSecret(s.Data)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if initialPassword != "" {
		initial := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: InitialAdminSecretName, Namespace: namespace},
			Data:       map[string][]byte{"password": []byte(initialPassword)},
		}
		if err := c.Create(ctx, initial); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("writing Secret/%s/%s: %w", namespace, InitialAdminSecretName, err)
		}
	}
	return out, nil
}

// fillServerSecret adds what data lacks. It reports whether it changed
// anything and the admin password it generated, if it did.
func fillServerSecret(data map[string][]byte, hosts []string) (bool, string, error) {
	changed, password := false, ""
	if len(data[keySecretKey]) == 0 {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return false, "", err
		}
		data[keySecretKey] = []byte(base64.StdEncoding.EncodeToString(key))
		changed = true
	}
	if len(data[keyAdminPassword]) == 0 {
		password = rand.Text()[:16]
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if err != nil {
			return false, "", err
		}
		data[keyAdminPassword] = hash
		data[keyAdminMtime] = []byte(time.Now().UTC().Format(time.RFC3339))
		changed = true
	}
	if len(data[keyTLSCert]) == 0 && len(data[keyTLSKey]) == 0 {
		cert, key, err := certs.SelfSigned("capstan-server", hosts)
		if err != nil {
			return false, "", err
		}
		data[keyTLSCert], data[keyTLSKey] = cert, key
		changed = true
	}
	return changed, password, nil
}

func parseServerSecret(data map[string][]byte) (*ServerSecret, error) {
	cert, err := tls.X509KeyPair(data[keyTLSCert], data[keyTLSKey])
	if err != nil {
		return nil, fmt.Errorf("%s and %s do not make a certificate: %w", keyTLSCert, keyTLSKey, err)
	}
	return &ServerSecret{SecretKey: data[keySecretKey], AdminPasswordHash: data[keyAdminPassword], Certificate: cert}, nil
}
