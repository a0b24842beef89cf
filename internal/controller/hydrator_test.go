package controller

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/gpgkey"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/metricscrape"
)

// TestSourceHydratorSyncsTheHydratedBranch: an Application written for
// Argo CD's source hydrator syncs, as Argo CD's controller does, what its
// syncSource names (the hydrated branch and path), not its dry source.
func TestSourceHydratorSyncsTheHydratedBranch(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	dest := testCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "dry", map[string]string{"dry/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\n"})
	remote.Branch(t, "environments/dev")
	remote.Commit(t, "hydrated", map[string]string{"dev/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hydrated}\n"})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "hydrated", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default",
			SourceHydrator: &v1alpha1.SourceHydrator{
				DrySource:  v1alpha1.DrySource{RepoURL: remote.URL, TargetRevision: "HEAD", Path: "dry"},
				SyncSource: v1alpha1.SyncSource{TargetBranch: "environments/dev", Path: "dev"},
			},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("hydrated")
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "hydrated", metav1.GetOptions{}); err != nil {
		t.Errorf("the hydrated branch's ConfigMap: %v", err)
	}
	if got := e.app("hydrated").Status.Sync.Revision; got != remote.Head(t, "environments/dev") {
		t.Errorf("synced revision %s, want the hydrated branch's head", got)
	}
}

// TestSourceHydratorHydrates: with the hydrator on, the dry source is
// rendered and pushed to the hydrated branch (created on first use) with
// the repository-write Secret's credentials, as Argo CD's hydrator writes
// it (manifest.yaml, hydrator.metadata, README.md; its commit message and
// author), the Application syncs that branch, and a new dry commit is
// hydrated and synced in turn. A sync path at the repository's root fails
// the hydration, shown in status.sourceHydrator.
func TestSourceHydratorHydrates(t *testing.T) {
	localcluster.Need(t)
	ns := testCluster.NewNamespace(t)
	c, err := kube.NewClient(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "gitops")
	ctx := context.Background()
	for kind, name := range map[string]string{v1alpha1.SecretTypeRepository: "read", v1alpha1.SecretTypeRepositoryWrite: "push"} {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{v1alpha1.LabelSecretType: kind}},
			StringData: map[string]string{"url": remote.URL, "username": srv.Username, "password": srv.Password}}); err != nil {
			t.Fatal(err)
		}
	}
	addr := metricscrape.Addr(t)
	e := startWith(t, ns, func(o *Options) {
		o.RepoPoll = time.Second
		o.Renderer = repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second, Credentials: &settings.RepoCredentials{Reader: c, Namespace: ns}})
		o.Hydrator = &HydratorOptions{Signing: signingKey(t)}
		o.MetricsAddr = addr
	})
	configMap := func(v string) map[string]string {
		return map[string]string{"dry/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {version: \"" + v + "\"}\n"}
	}
	first := remote.Commit(t, "first dry\n\nwith a body", configMap("1"))
	dest := testCluster.NewNamespace(t)
	newHydrated := func(name, path, dest string) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			Spec: v1alpha1.ApplicationSpec{
				Project: "default",
				SourceHydrator: &v1alpha1.SourceHydrator{
					DrySource:  v1alpha1.DrySource{RepoURL: remote.URL, TargetRevision: "HEAD", Path: "dry"},
					SyncSource: v1alpha1.SyncSource{TargetBranch: "environments/dev", Path: path},
				},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
			},
		}
	}
	e.create(newHydrated("hydrated", "dev", dest), newHydrated("at-root", "", testCluster.NewNamespace(t)))
	e.waitSyncedHealthy("hydrated")
	st := e.app("hydrated").Status.SourceHydrator
	if last := st.LastSuccessfulOperation; last == nil || last.DrySHA != first || last.HydratedSHA != remote.Head(t, "environments/dev") {
		t.Fatalf("status.sourceHydrator %+v; dry %s, branch at %s", st, first, remote.Head(t, "environments/dev"))
	}
	if m := remote.Show(t, "environments/dev", "dev/manifest.yaml"); !strings.Contains(m, "name: settings") || !strings.Contains(m, "version: \"1\"") {
		t.Errorf("dev/manifest.yaml:\n%s", m)
	}
	if m := remote.Show(t, "environments/dev", "hydrator.metadata"); !strings.Contains(m, `"drySha": "`+first+`"`) || !strings.Contains(m, `"subject": "first dry"`) {
		t.Errorf("hydrator.metadata:\n%s", m)
	}
	if m := remote.Show(t, "environments/dev", "dev/README.md"); !strings.Contains(m, "git checkout "+first) {
		t.Errorf("dev/README.md:\n%s", m)
	}
	if log := remote.Log(t, "environments/dev", 1)[0]; log != first[:7]+": first dry <Argo CD argo-cd@example.com>" {
		t.Errorf("hydrated commit %q", log)
	}
	// Signed with the commit signing key (commitserver.signing.key.path).
	if err := remote.VerifyCommit(remote.Head(t, "environments/dev")); err != nil {
		t.Errorf("the hydrated commit does not verify: %v", err)
	}
	e.eventually("the root path refused", func() string {
		op := e.app("at-root").Status.SourceHydrator.CurrentOperation
		if op == nil || op.Phase != v1alpha1.HydrateOperationPhaseFailed || !strings.Contains(op.Message, "root is not supported") {
			return fmt.Sprintf("operation %+v", op)
		}
		return ""
	})

	second := remote.Commit(t, "second dry", configMap("2"))
	e.eventually("the second dry commit hydrated and synced", func() string {
		cm, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if last := e.app("hydrated").Status.SourceHydrator.LastSuccessfulOperation; last == nil || last.DrySHA != second || cm.Data["version"] != "2" {
			return fmt.Sprintf("live version %q, hydrated %+v", cm.Data["version"], last)
		}
		return ""
	})
	if n := len(remote.Log(t, "environments/dev", 10)); n != 2 {
		t.Errorf("%d commits on the hydrated branch, want 2", n)
	}
	// The commits are counted as Argo CD's commit server counts them.
	repoLabel := `{repo="` + remote.URL + `"`
	metricscrape.Until(t, addr,
		`argocd_commitserver_commit_request_total`+repoLabel+`,response_type="success"}`,
		`argocd_commitserver_commit_request_duration_seconds_bucket`+repoLabel+`,response_type="success"`,
		`argocd_commitserver_commit_pending_request_total`+repoLabel+`} 0`,
		`argocd_commitserver_git_request_total`+repoLabel+`,request_type="push"}`,
		`argocd_commitserver_git_request_total`+repoLabel+`,request_type="fetch"}`,
		`argocd_commitserver_git_request_duration_seconds_bucket`+repoLabel+`,request_type="push"`)
}

// signingKey imports a new OpenPGP private key, with a passphrase, as the
// hydrator's commit signing key; git verifies commits with its keyring
// until the test ends.
func signingKey(t *testing.T) *git.Signing {
	t.Helper()
	key := gpgkey.New(t, "hydrator")
	dir := t.TempDir()
	keyFile, passFile := filepath.Join(dir, "signingKey"), filepath.Join(dir, "passphrase")
	if err := os.WriteFile(keyFile, []byte(key.ArmoredPrivate("s3cret")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(passFile, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "gnupg")
	t.Cleanup(func() { _ = exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run() })
	signing, err := git.ImportSigningKey(context.Background(), home, keyFile, passFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GNUPGHOME", home)
	return signing
}
