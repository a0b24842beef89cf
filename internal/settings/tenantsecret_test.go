package settings

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/keytests"
)

// TestSecretScope: a tenant's field reads a Secret of its own namespace
// (and those an administrator adds), never the install's keys, a
// repository, credential or cluster Secret, nor a service account token.
func TestSecretScope(t *testing.T) {
	secret := func(ns, name string, labels map[string]string, typ corev1.SecretType) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Type: typ}
	}
	c := fake.NewClientBuilder().WithObjects(
		secret("team", "mine", nil, ""),
		secret("team", "scm", map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeSCMCreds}, ""),
		secret("team", ServerSecretName, nil, ""),
		secret("team", "repo", map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepoCredentials}, ""),
		secret("team", "prod", map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}, ""),
		secret("team", "sa", nil, corev1.SecretTypeServiceAccountToken),
		secret("other", "theirs", nil, ""),
		secret("shared", "pull", nil, ""),
	).Build()
	scope := SecretScope{Namespace: "team", Also: []string{"shared"}, Field: "pull-secret of Application/team/web"}
	for _, tc := range []struct {
		ns, name string
		ok       bool
	}{
		{"team", "mine", true}, {"", "mine", true}, {"team", "scm", true}, {"shared", "pull", true},
		{"other", "theirs", false}, {"team", ServerSecretName, false}, {"team", "repo", false}, {"team", "prod", false}, {"team", "sa", false},
	} {
		_, err := scope.Read(context.Background(), c, tc.ns, tc.name)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrSecretRefused)) || (err != nil && !strings.Contains(err.Error(), scope.Field)) {
			t.Errorf("%s/%s: %v, want ok %v", tc.ns, tc.name, err, tc.ok)
		}
	}
}

// TestSecurityFieldTable: every test the tenant field table of
// docs/security.md names exists.
func TestSecurityFieldTable(t *testing.T) {
	data, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Fields a tenant writes")
	if !ok {
		t.Fatal("docs/security.md has no section on the fields a tenant writes")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	declared := keytests.Declared(t, "../..")
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) != 5 || cells[0] == "Object" {
			continue
		}
		rows++
		names := regexp.MustCompile("`(Test\\w+)`").FindAllStringSubmatch(cells[4], -1)
		if len(names) == 0 {
			t.Errorf("row %q names no test", cells[1])
		}
		for _, m := range names {
			if !declared[m[1]] {
				t.Errorf("row %q names %s, which does not exist", cells[1], m[1])
			}
		}
	}
	if rows < 20 {
		t.Errorf("%d rows in the table, want every field", rows)
	}
}
