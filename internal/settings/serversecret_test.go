package settings

import (
	"bytes"
	"context"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestEnsureServerSecretOnAFreshInstall(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	first, err := EnsureServerSecret(ctx, c, ns, []string{"localhost", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	initial := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: InitialAdminSecretName}, initial); err != nil {
		t.Fatal(err)
	}
	password := initial.Data["password"]
	if len(password) < 16 {
		t.Fatalf("initial admin password %q is too short", password)
	}
	if err := bcrypt.CompareHashAndPassword(first.AdminPasswordHash, password); err != nil {
		t.Errorf("admin.password does not match the initial password: %v", err)
	}
	if len(first.SecretKey) < 32 {
		t.Errorf("server.secretkey is %d bytes", len(first.SecretKey))
	}
	leaf, err := x509.ParseCertificate(first.Certificate.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.VerifyHostname("localhost") != nil || leaf.VerifyHostname("127.0.0.1") != nil {
		t.Errorf("certificate names %v %v", leaf.DNSNames, leaf.IPAddresses)
	}

	// A second start keeps everything; it does not reset the password.
	if err := c.Delete(ctx, initial); err != nil {
		t.Fatal(err)
	}
	second, err := EnsureServerSecret(ctx, c, ns, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.SecretKey, second.SecretKey) || !bytes.Equal(first.AdminPasswordHash, second.AdminPasswordHash) ||
		!bytes.Equal(first.Certificate.Certificate[0], second.Certificate.Certificate[0]) {
		t.Error("a second start changed argocd-secret")
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: InitialAdminSecretName}, &corev1.Secret{}); err == nil {
		t.Error("a second start wrote a new initial admin password")
	}
}

func TestEnsureServerSecretKeepsTheUsersCertificate(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	cert, key, err := certs.SelfSigned("test", []string{"cd.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: ServerSecretName, Namespace: ns},
		Data:       map[string][]byte{"tls.crt": cert, "tls.key": key, "admin.password": hash},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := EnsureServerSecret(ctx, c, ns, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(got.Certificate.Certificate[0])
	if leaf.VerifyHostname("cd.example.com") != nil {
		t.Errorf("the user's certificate was replaced: %v", leaf.DNSNames)
	}
	if !bytes.Equal(got.AdminPasswordHash, hash) || len(got.SecretKey) == 0 {
		t.Error("the admin password was replaced, or no secret key was added")
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: InitialAdminSecretName}, &corev1.Secret{}); err == nil {
		t.Error("an initial admin password was written though admin.password was set")
	}

	// A certificate without its key is an error naming the Secret.
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ServerSecretName}, s); err != nil {
		t.Fatal(err)
	}
	s.Data["tls.key"] = []byte("not a key")
	if err := c.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	_, err = EnsureServerSecret(ctx, c, ns, nil)
	if err == nil || !strings.Contains(err.Error(), "Secret/"+ns+"/argocd-secret") || !strings.Contains(err.Error(), "tls.key") {
		t.Errorf("bad key: got %v, want an error naming the Secret and the key", err)
	}
}
