package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestClusterAddDeploysToASecondCluster adds a second local cluster with
// cluster add, checks it holds exactly the objects `argocd cluster add` makes and the
// cluster Secret is Argo CD's, deploys an Application there, then rotates
// the token and deploys again.
func TestClusterAddDeploysToASecondCluster(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	f.login()
	ctx := context.Background()
	second, err := localcluster.Start(ctx, localcluster.Options{Workloads: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = second.Stop() }()
	remote, err := second.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	expect := func(want int, args ...string) string {
		t.Helper()
		code, stdout, stderr := f.run(args...)
		if code != want {
			t.Fatalf("capstan %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, stdout, stderr)
		}
		return stdout + stderr
	}

	out := expect(0, "cluster", "add", "capstan-local", "--kubeconfig", second.KubeconfigPath, "--name", "second", "--yes")
	server := second.Config.Host
	if !strings.Contains(out, `ServiceAccount "argocd-manager" created in namespace "kube-system"`) || !strings.Contains(out, "Cluster '"+server+"' added") {
		t.Errorf("cluster add output:\n%s", out)
	}
	role, err := remote.RbacV1().ClusterRoles().Get(ctx, "argocd-manager-role", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}, {NonResourceURLs: []string{"*"}, Verbs: []string{"*"}}}
	if !equality.Semantic.DeepEqual(role.Rules, wantRules) {
		t.Errorf("argocd-manager-role rules: %+v", role.Rules)
	}
	binding, err := remote.RbacV1().ClusterRoleBindings().Get(ctx, "argocd-manager-role-binding", metav1.GetOptions{})
	if err != nil || binding.RoleRef.Name != "argocd-manager-role" || binding.Subjects[0].Name != "argocd-manager" || binding.Subjects[0].Namespace != "kube-system" {
		t.Fatalf("argocd-manager-role-binding: %v %+v", err, binding)
	}

	secrets := &corev1.SecretList{}
	if err := f.c.List(ctx, secrets, client.InNamespace(f.ns), client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}); err != nil || len(secrets.Items) != 1 {
		t.Fatalf("cluster Secrets: %v %d", err, len(secrets.Items))
	}
	sec := secrets.Items[0]
	var cfg cluster.Config
	if err := json.Unmarshal(sec.Data["config"], &cfg); err != nil {
		t.Fatal(err)
	}
	if sec.Name != cluster.SecretName(server) || !strings.HasPrefix(sec.Name, "cluster-127.0.0.1-") || sec.Annotations["managed-by"] != "argocd.argoproj.io" ||
		string(sec.Data["name"]) != "second" || string(sec.Data["server"]) != server || len(sec.Data) != 3 || cfg.BearerToken != managerToken(t, ctx, remote) {
		t.Errorf("cluster Secret: %s %v %v %+v", sec.Name, sec.Annotations, slices.Sorted(maps.Keys(sec.Data)), cfg.TLSClientConfig)
	}
	if out := expect(0, "cluster", "list", "-o", "json"); !strings.Contains(out, server) || strings.Contains(out, cfg.BearerToken) {
		t.Errorf("cluster list shows the server and never the token:\n%s", out)
	}

	repo := gitserver.NewLocalRepo(t)
	repo.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
	expect(0, "app", "create", "remote", "--repo", repo.URL, "--path", "app", "--dest-name", "second", "--dest-namespace", "default")
	expect(0, "app", "sync", "remote", "--timeout", "60")
	if cm, err := remote.CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{}); err != nil || cm.Data["v"] != "one" {
		t.Fatalf("the app on the second cluster: %v %v", err, cm)
	}

	// The API server reads the app's resources with the cluster's token,
	// and again, without a restart, once the token is rotated (and the
	// old one revoked).
	readThroughAPI := func(when string) {
		t.Helper()
		expect(0, "app", "diff", "remote")
		if out := expect(0, "app", "resources", "remote", "-o", "tree"); !strings.Contains(out, "ConfigMap/settings") {
			t.Errorf("resource tree %s:\n%s", when, out)
		}
		var live struct{ Manifest string }
		if err := f.get("/api/v1/applications/remote/resource?namespace=default&resourceName=settings&version=v1&kind=ConfigMap", &live); err != nil ||
			!strings.Contains(live.Manifest, `"settings"`) {
			t.Errorf("live resource %s: %v %q", when, err, live.Manifest)
		}
	}
	readThroughAPI("before rotate-auth")
	old := cfg.BearerToken
	expect(0, "cluster", "rotate-auth", server)
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(&sec), &sec); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sec.Data["config"], &cfg); err != nil || cfg.BearerToken == old || cfg.BearerToken != managerToken(t, ctx, remote) {
		t.Fatalf("after rotate-auth the Secret holds the one live token: %v", err)
	}
	revoked(t, ctx, &rest.Config{Host: server, BearerToken: old, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.TLSClientConfig.CAData, Insecure: cfg.TLSClientConfig.Insecure}})
	repo.Commit(t, "two", map[string]string{"app/cm.yaml": configMapYAML("two")})
	expect(0, "app", "sync", "remote", "--timeout", "60")
	if cm, err := remote.CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{}); err != nil || cm.Data["v"] != "two" {
		t.Fatalf("a sync with the rotated token: %v %v", err, cm)
	}
	readThroughAPI("after rotate-auth")

	expect(0, "cluster", "rm", server)
	expect(1, "cluster", "get", server)
}

// revoked waits until the cluster refuses cfg's token (the API server
// remembers a token it accepted for a few seconds).
func revoked(t *testing.T, ctx context.Context, cfg *rest.Config) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	eventually.Within(t, eventually.Options{Interval: 500 * time.Millisecond}, "the old token is refused", func() string {
		_, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1})
		if apierrors.IsUnauthorized(err) {
			return ""
		}
		return fmt.Sprintf("accepted (%v)", err)
	})
}

// managerToken returns the token of the only argocd-manager token Secret.
func managerToken(t *testing.T, ctx context.Context, cs kubernetes.Interface) string {
	t.Helper()
	var token string
	eventually.String(t, "one argocd-manager token Secret", func() string {
		list, err := cs.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "type=kubernetes.io/service-account-token"})
		if err != nil {
			return err.Error()
		}
		var tokens []string
		for _, s := range list.Items {
			if s.Annotations[corev1.ServiceAccountNameKey] == "argocd-manager" && s.DeletionTimestamp == nil {
				tokens = append(tokens, string(s.Data["token"]))
			}
		}
		if len(tokens) != 1 {
			return fmt.Sprintf("%d token Secrets", len(tokens))
		}
		token = tokens[0]
		return ""
	})
	return token
}

// TestClusterAddAsksFirst: without --yes, cluster add asks, and a "no"
// leaves the cluster untouched.
func TestClusterAddAsksFirst(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	f.login()
	root := NewRoot()
	var out, errOut strings.Builder
	root.SetArgs([]string{"cluster", "add", "capstan-local", "--kubeconfig", kubeCluster.KubeconfigPath, "--config", f.config})
	root.SetIn(strings.NewReader("n\n"))
	root.SetOut(&out)
	root.SetErr(&errOut)
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("declined cluster add: %v", err)
	}
	if !strings.Contains(out.String(), "WARNING: This will create a service account `argocd-manager`") {
		t.Errorf("no confirmation asked:\n%s", out.String())
	}
	cs, err := kubeCluster.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("kube-system").Get(context.Background(), "argocd-manager", metav1.GetOptions{}); err == nil {
		t.Error("a declined cluster add created the ServiceAccount")
	}
}
