package settings

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAccounts(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	// No argocd-cm or argocd-secret yet: admin alone, without a password.
	accounts, err := Accounts(ctx, c, ns)
	if err != nil || len(accounts) != 1 || !accounts["admin"].Enabled || !accounts["admin"].Can(CapabilityLogin) || accounts["admin"].PasswordHash != nil {
		t.Fatalf("fresh install: %+v, %v", accounts, err)
	}

	// The image updater's restricted account, a disabled one, and admin turned off.
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: CMName, Namespace: ns}, Data: map[string]string{
		"accounts.image-updater": "apiKey",
		"accounts.alice":         "apiKey, login",
		"accounts.bob":           "login",
		"accounts.bob.enabled":   "false",
		"admin.enabled":          "false",
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureServerSecret(ctx, c, ns, nil); err != nil {
		t.Fatal(err)
	}
	if err := AddToken(ctx, c, ns, "image-updater", Token{ID: "t2", IssuedAt: 200}); err != nil {
		t.Fatal(err)
	}
	if err := AddToken(ctx, c, ns, "image-updater", Token{ID: "t1", IssuedAt: 100, ExpiresAt: 900}); err != nil {
		t.Fatal(err)
	}
	if err := AddToken(ctx, c, ns, "image-updater", Token{ID: "t1", IssuedAt: 300}); err == nil {
		t.Error("a second token with the same id was accepted")
	}
	accounts, err = Accounts(ctx, c, ns)
	if err != nil {
		t.Fatal(err)
	}
	iu := accounts["image-updater"]
	if iu == nil || !iu.Enabled || !iu.Can(CapabilityAPIKey) || iu.Can(CapabilityLogin) || len(iu.Tokens) != 2 || iu.Tokens[0].ID != "t1" || iu.Tokens[0].ExpiresAt != 900 {
		t.Errorf("image-updater = %+v", iu)
	}
	if a := accounts["alice"]; a == nil || !a.Can(CapabilityAPIKey) || !a.Can(CapabilityLogin) {
		t.Errorf("alice = %+v", a)
	}
	if b := accounts["bob"]; b == nil || b.Enabled {
		t.Errorf("bob = %+v, want disabled", b)
	}
	if a := accounts["admin"]; a.Enabled || a.PasswordHash == nil || a.PasswordMtime == nil {
		t.Errorf("admin = %+v, want disabled, with the generated password", a)
	}

	if err := RemoveToken(ctx, c, ns, "image-updater", "t1"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveToken(ctx, c, ns, "image-updater", "t1"); err == nil || !strings.Contains(err.Error(), "no token with id t1") {
		t.Errorf("revoking twice: %v", err)
	}
	accounts, _ = Accounts(ctx, c, ns)
	if toks := accounts["image-updater"].Tokens; len(toks) != 1 || toks[0].ID != "t2" {
		t.Errorf("after revoking t1: %+v", toks)
	}
}

func TestMalformedAccounts(t *testing.T) {
	localcluster.Need(t)
	for _, tc := range []struct {
		cm, secret map[string]string
		want       string
	}{
		{cm: map[string]string{"accounts.x": "apikey"}, want: `ConfigMap/NS/argocd-cm: accounts.x has unknown capability "apikey"`},
		{cm: map[string]string{"accounts.x": "login", "accounts.x.enabled": "yes please"}, want: `accounts.x.enabled is "yes please"`},
		{cm: map[string]string{"admin.enabled": "nope"}, want: `admin.enabled is "nope"`},
		{cm: map[string]string{"accounts.x": "apiKey"}, secret: map[string]string{"accounts.x.tokens": "[{"}, want: "Secret/NS/argocd-secret: accounts.x.tokens is not a JSON list"},
		{secret: map[string]string{"admin.passwordMtime": "yesterday"}, want: "Secret/NS/argocd-secret: admin.passwordMtime is not an RFC 3339 time"},
	} {
		c, ns := setup(t)
		ctx := context.Background()
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: CMName, Namespace: ns}, Data: tc.cm}); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ServerSecretName, Namespace: ns}, StringData: tc.secret}); err != nil {
			t.Fatal(err)
		}
		_, err := Accounts(ctx, c, ns)
		if want := strings.ReplaceAll(tc.want, "NS", ns); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v / %v: got %v, want %q", tc.cm, tc.secret, err, want)
		}
	}
}
