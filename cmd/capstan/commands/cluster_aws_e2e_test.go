package commands

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/stsserver"
)

// TestClusterAddEKS adds a cluster whose API server, as EKS's, takes only
// tokens AWS STS vouches for: cluster add --aws-cluster-name stores Argo
// CD's awsAuthConfig and makes no ServiceAccount, and Capstan reaches the
// cluster as the assumed role, through capstan k8s-auth aws run as the
// client's exec plugin (a token presigned with the profile's keys, which
// the cluster's authenticator has STS check for its cluster name); with
// --cluster-endpoint kube-public, at the address the cluster publishes.
func TestClusterAddEKS(t *testing.T) {
	localcluster.Need(t)
	sts := stsserver.New(t)
	sts.UseFromEnvironment(t)
	ctx := context.Background()
	eks, err := localcluster.Start(ctx, localcluster.Options{TokenWebhookConfig: sts.WebhookConfig(t, t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = eks.Stop() }()

	f := startCapstan(t, false)
	f.login()
	f.expect(0, "cluster", "add", "capstan-local", "--kubeconfig", eks.KubeconfigPath, "--name", "eks", "--aws-cluster-name", sts.ClusterName,
		"--aws-role-arn", sts.RoleARN, "--aws-profile", "eks", "--yes")
	secrets := &corev1.SecretList{}
	if err := f.c.List(ctx, secrets, client.InNamespace(f.ns), client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}); err != nil || len(secrets.Items) != 1 {
		t.Fatalf("cluster Secrets: %v %d", err, len(secrets.Items))
	}
	var cfg map[string]any
	if err := json.Unmarshal(secrets.Items[0].Data["config"], &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"clusterName": sts.ClusterName, "roleARN": sts.RoleARN, "profile": "eks"}
	if got, _ := json.Marshal(cfg["awsAuthConfig"]); string(got) != string(must(json.Marshal(want))) || cfg["bearerToken"] != nil {
		t.Errorf("the cluster's config: %v", cfg)
	}
	admin, err := eks.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts("kube-system").Get(ctx, cluster.ManagerServiceAccount, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster add made %s on an EKS cluster: %v", cluster.ManagerServiceAccount, err)
	}

	registry := &cluster.Registry{Reader: f.c, Namespace: f.ns}
	c, err := registry.Get(ctx, v1alpha1.ApplicationDestination{Name: "eks"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("reaching the EKS cluster as Capstan: %v", err)
	}
	if user := review.Status.UserInfo.Username; !strings.Contains(user, ":assumed-role/capstan-deployer/") {
		t.Errorf("Capstan reached the cluster as %q, want the assumed role", user)
	}
	// --cluster-endpoint kube-public registers the address the cluster
	// publishes in kube-public's cluster-info, with its CA.
	host := strings.Replace(eks.Config.Host, "127.0.0.1", "localhost", 1)
	published := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: \"\"\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n",
		host, base64.StdEncoding.EncodeToString(eks.Config.CAData))
	if _, err := admin.CoreV1().ConfigMaps("kube-public").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cluster-info"},
		Data: map[string]string{"kubeconfig": published}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.expect(0, "cluster", "add", "capstan-local", "--kubeconfig", eks.KubeconfigPath, "--name", "eks-public", "--cluster-endpoint", "kube-public",
		"--aws-cluster-name", sts.ClusterName, "--aws-profile", "eks", "--yes")
	public, err := registry.Get(ctx, v1alpha1.ApplicationDestination{Name: "eks-public"})
	if err != nil {
		t.Fatal(err)
	}
	if public.Server != host {
		t.Errorf("--cluster-endpoint kube-public registered %s, want %s", public.Server, host)
	}
	if cs, err := kubernetes.NewForConfig(public.Config); err != nil {
		t.Fatal(err)
	} else if review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil ||
		!strings.HasSuffix(review.Status.UserInfo.Username, ":user/deployer") {
		t.Errorf("reaching the published endpoint as the profile's user: %v", err)
	}
	// cluster list shows each cluster's version and connection, as the API
	// server last found them (it asks again in the background).
	eventually.String(t, "cluster list with both EKS clusters connected", func() string {
		out := f.expect(0, "cluster", "list")
		for _, name := range []string{"eks", "eks-public"} {
			if !regexp.MustCompile(`\s` + name + `\s+1\.\d+\s+Successful`).MatchString(out) {
				return out
			}
		}
		return ""
	})
	if sts.Calls("AssumeRole") == 0 || sts.Calls("GetCallerIdentity") == 0 {
		t.Errorf("STS answered %d AssumeRole and %d GetCallerIdentity calls", sts.Calls("AssumeRole"), sts.Calls("GetCallerIdentity"))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
