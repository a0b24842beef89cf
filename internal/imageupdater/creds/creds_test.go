package creds

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &cluster))
}

// TestSources resolves each kind of source against a real API server.
func TestSources(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.NewNamespace(t)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "argocd-image-updater-docker-registry-secret", Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"https://asia.gcr.io":{"auth":"X2pzb25fa2V5OnNlY3JldA=="},"registry.local:5000":{"username":"ci","password":"pw"}}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "registry-creds", Namespace: ns}, Data: map[string][]byte{"creds": []byte("robot:t0ken\n")}},
	} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("REGISTRY_CREDS", "env-user:env-pass")
	script := filepath.Join(t.TempDir(), "ecr-login.sh")
	count := filepath.Join(t.TempDir(), "runs")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho run >> "+count+"\necho logging in >&2\necho AWS:ecr-token\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Resolver{Client: c}
	for _, tc := range []struct{ source, host, user, password string }{
		{"pullsecret:" + ns + "/argocd-image-updater-docker-registry-secret", "asia.gcr.io", "_json_key", "secret"},
		{"pullsecret:" + ns + "/argocd-image-updater-docker-registry-secret", "registry.local:5000", "ci", "pw"},
		{"secret:" + ns + "/registry-creds#creds", "any", "robot", "t0ken"},
		{"env:REGISTRY_CREDS", "any", "env-user", "env-pass"},
		{"ext:" + script, "ecr", "AWS", "ecr-token"},
	} {
		got, err := r.Resolve(ctx, Admin(tc.source), tc.host, 0)
		if err != nil || got.Username != tc.user || got.Password != tc.password {
			t.Errorf("%s for %s: %+v %v", tc.source, tc.host, got, err)
		}
	}

	// An ext: script runs again only once its credentials expire.
	now := time.Now()
	r = &Resolver{Client: c, now: func() time.Time { return now }}
	for range 3 {
		if _, err := r.Resolve(ctx, Admin("ext:"+script), "ecr", 10*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(11 * time.Hour)
	if _, err := r.Resolve(ctx, Admin("ext:"+script), "ecr", 10*time.Hour); err != nil {
		t.Fatal(err)
	}
	if runs, _ := os.ReadFile(count); strings.Count(string(runs), "run") != 3 { // 1 above, then 1 + 1 after expiry
		t.Errorf("the script ran %d times, want 3", strings.Count(string(runs), "run"))
	}
}

func TestBadSourcesAreNamed(t *testing.T) {
	localcluster.Need(t)
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.NewNamespace(t)
	slow := filepath.Join(t.TempDir(), "slow.sh")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nsleep 5\necho a:b\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	plain := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Errorf("an ext: source ran a command: %s exists", marker)
		}
	}()
	r := &Resolver{Client: c, ScriptTimeout: 200 * time.Millisecond}
	for _, source := range []string{
		"pullsecret:" + ns + "/missing",
		"pullsecret:no-slash",
		"secret:" + ns + "/missing#creds",
		"secret:" + ns + "/x",
		"env:CAPSTAN_NOT_SET_ANYWHERE",
		"ext:" + slow,
		"ext:/no/such/script",
		// Only an absolute path to an executable file runs, as it is:
		// never looked up, split into arguments or given to a shell.
		"ext:sh",
		"ext:" + dir,
		"ext:" + plain,
		"ext:/bin/sh -c 'touch " + marker + "'",
		"ext:$(touch " + marker + ")",
		"vault:x",
	} {
		_, err := r.Resolve(context.Background(), Admin(source), "host", 0)
		if err == nil || !strings.Contains(err.Error(), strings.SplitN(source, "/", 2)[0]) {
			t.Errorf("%s: %v", source, err)
		}
	}
}
