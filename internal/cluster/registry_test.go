package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
	"github.com/capstan-cd/capstan/internal/testing/faultproxy"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// control holds the cluster Secrets; each test that needs a destination
// starts its own second cluster.
var control *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &control))
}

func clusterSecret(t *testing.T, ns, name string, data map[string]string) {
	localcluster.Need(t)
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(control.Config)
	_, err := cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster},
			Annotations: map[string]string{"managed-by": "argocd.argoproj.io"}},
		StringData: data,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func registry(t *testing.T, ns string) *Registry {
	localcluster.Need(t)
	c, err := kube.NewClient(control.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &Registry{Reader: c, Namespace: ns, InCluster: control.Config}
}

// TestClusterSecretReachesTheCluster registers a second real cluster
// the way `argocd cluster add` does (name, server and a config with
// a bearer token) and reaches it by name and by server.
func TestClusterSecretReachesTheCluster(t *testing.T) {
	localcluster.Need(t)
	prod, err := localcluster.Start(context.Background(), localcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Stop()
	ns := control.NewNamespace(t)

	withCA, _ := json.Marshal(Config{BearerToken: prod.Config.BearerToken, TLSClientConfig: TLSClientConfig{CAData: prod.Config.CAData}})
	clusterSecret(t, ns, "cluster-prod-358811194", map[string]string{
		"name": "default/api-cluster-production:6443/admin", "server": prod.Config.Host, "config": string(withCA),
	})
	// The config `argocd cluster add` writes for a token and insecure TLS.
	insecure := `{"bearerToken":"` + prod.Config.BearerToken + `","tlsClientConfig":{"insecure":true}}`
	clusterSecret(t, ns, "cluster-insecure", map[string]string{"name": "prod-insecure", "server": prod.Config.Host + "/", "config": insecure, "namespaces": "a, b", "shard": "1"})

	reg := registry(t, ns)
	for _, dest := range []v1alpha1.ApplicationDestination{
		{Name: "default/api-cluster-production:6443/admin"},
		{Name: "prod-insecure"},
		{Name: InClusterName},
		{Server: InClusterServer},
	} {
		c, err := reg.Get(context.Background(), dest)
		if err != nil {
			t.Fatalf("%+v: %v", dest, err)
		}
		if _, err := kubernetes.NewForConfigOrDie(c.Config).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
			t.Errorf("%+v: reaching %s: %v", dest, c.Server, err)
		}
	}
	c, err := reg.Get(context.Background(), v1alpha1.ApplicationDestination{Name: "prod-insecure"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Namespaces, ",") != "a,b" || c.Shard == nil || *c.Shard != 1 {
		t.Errorf("namespaces %v shard %v", c.Namespaces, c.Shard)
	}
	// By server, two Secrets point at the same URL; either reaches it.
	if _, err := reg.Get(context.Background(), v1alpha1.ApplicationDestination{Server: prod.Config.Host}); err != nil {
		t.Errorf("by server: %v", err)
	}
}

func TestBadDestinationsAndSecrets(t *testing.T) {
	localcluster.Need(t)
	ns := control.NewNamespace(t)
	reg := registry(t, ns)
	for _, tc := range []struct {
		dest v1alpha1.ApplicationDestination
		want string
	}{
		{v1alpha1.ApplicationDestination{Name: "nope"}, "application references destination cluster nope which does not exist"},
		{v1alpha1.ApplicationDestination{Server: "https://nope:6443"}, "cluster 'https://nope:6443' has not been configured"},
		{v1alpha1.ApplicationDestination{Name: "a", Server: "https://b"}, "can't have both name and server defined: a https://b"},
		{v1alpha1.ApplicationDestination{}, "Destination server missing from app spec"},
	} {
		if _, err := reg.Get(context.Background(), tc.dest); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.dest, err, tc.want)
		}
	}
	clusterSecret(t, ns, "broken", map[string]string{"server": "https://x", "config": "{not json"})
	if _, err := reg.List(context.Background()); err == nil || !strings.Contains(err.Error(), "Secret/"+ns+"/broken") {
		t.Errorf("malformed config: got %v, want an error naming the Secret", err)
	}
}

func TestInClusterSecretRenamesInCluster(t *testing.T) {
	localcluster.Need(t)
	ns := control.NewNamespace(t)
	clusterSecret(t, ns, "in-cluster", map[string]string{"name": "home", "server": InClusterServer})
	reg := registry(t, ns)
	c, err := reg.Get(context.Background(), v1alpha1.ApplicationDestination{Name: "home"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Config.Host != control.Config.Host {
		t.Errorf("renamed in-cluster reaches %s, want the controller's own cluster", c.Config.Host)
	}
	all, _ := reg.List(context.Background())
	if len(all) != 1 {
		t.Errorf("in-cluster listed %d times", len(all))
	}
}

// TestRegistryFollowsSecretChanges: a cluster Secret is parsed once per
// version, yet every change of it is seen, a deleted one is gone, and the
// clusters handed out are the caller's to change.
func TestRegistryFollowsSecretChanges(t *testing.T) {
	localcluster.Need(t)
	ns := control.NewNamespace(t)
	clusterSecret(t, ns, "dev", map[string]string{"name": "dev", "server": "https://dev.example.com"})
	r := registry(t, ns)
	ctx := context.Background()
	dest := v1alpha1.ApplicationDestination{Server: "https://dev.example.com"}
	first, err := r.Get(ctx, dest)
	if err != nil {
		t.Fatal(err)
	}
	first.Name, first.Config.Host = "changed by a caller", "https://elsewhere"
	again, err := r.Get(ctx, dest)
	if err != nil {
		t.Fatal(err)
	}
	if again.Name != "dev" || again.Config.Host != "https://dev.example.com" {
		t.Errorf("a caller's change reached the registry: %s at %s", again.Name, again.Config.Host)
	}
	cs := kubernetes.NewForConfigOrDie(control.Config)
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.StringData = map[string]string{"namespaces": "team-a"}
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	changed, err := r.Get(ctx, dest)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed.Namespaces, ",") != "team-a" {
		t.Errorf("after the Secret changed the cluster's namespaces are %v, want [team-a]", changed.Namespaces)
	}
	if err := cs.CoreV1().Secrets(ns).Delete(ctx, "dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, dest); err == nil {
		t.Error("a deleted cluster Secret still names a cluster")
	}
	if len(r.parsed) != 0 {
		t.Errorf("%d parsed Secrets kept after the only one was deleted", len(r.parsed))
	}
}

// TestInClusterDisabled: with argocd-cm's cluster.inClusterEnabled
// "false", in-cluster is neither listed nor found, even when a Secret
// defines it, as in Argo CD; the other clusters stay.
func TestInClusterDisabled(t *testing.T) {
	localcluster.Need(t)
	ns := control.NewNamespace(t)
	clusterSecret(t, ns, "in-cluster", map[string]string{"name": "home", "server": InClusterServer})
	clusterSecret(t, ns, "other", map[string]string{"name": "other", "server": "https://other.example.com"})
	cs := kubernetes.NewForConfigOrDie(control.Config)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm"},
		Data: map[string]string{"cluster.inClusterEnabled": "false"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reg := registry(t, ns)
	all, err := reg.List(context.Background())
	if err != nil || len(all) != 1 || all[0].Name != "other" {
		t.Errorf("clusters with in-cluster disabled: %v, %v", all, err)
	}
	for _, dest := range []v1alpha1.ApplicationDestination{{Server: InClusterServer}, {Name: "home"}} {
		var de *DestinationError
		if _, err := reg.Get(context.Background(), dest); !errors.As(err, &de) {
			t.Errorf("%+v: %v, want a destination error", dest, err)
		}
	}
	if _, err := reg.Get(context.Background(), v1alpha1.ApplicationDestination{Server: InClusterServer}); err == nil || err.Error() != `cluster "https://kubernetes.default.svc" is disabled` {
		t.Errorf("in-cluster by URL: %v", err)
	}
}

// TestClustersGetTheTransportTuning: a destination read from a Secret is
// reached with the component's ARGOCD_K8S* tuning, here a retry that
// rides out its API server's 503.
func TestClustersGetTheTransportTuning(t *testing.T) {
	localcluster.Need(t)
	ns := control.NewNamespace(t)
	front := faultproxy.NewKubeFront(t, control.Config)
	config, _ := json.Marshal(Config{BearerToken: "ignored", TLSClientConfig: TLSClientConfig{CAData: front.Config.CAData}})
	clusterSecret(t, ns, "behind-a-front", map[string]string{"name": "flaky", "server": front.Config.Host, "config": string(config)})

	reg := registry(t, ns)
	reg.Transport = kubehttp.Options{RetryMax: 1, RetryBaseBackoff: time.Millisecond}
	c, err := reg.Get(context.Background(), v1alpha1.ApplicationDestination{Name: "flaky"})
	if err != nil {
		t.Fatal(err)
	}
	front.Fail(http.StatusServiceUnavailable)
	if _, err := kubernetes.NewForConfigOrDie(c.Config).CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("reaching the cluster past one 503: %v", err)
	}
	if n := front.Requests(http.MethodGet); n != 2 {
		t.Errorf("the front saw %d GETs, want 2", n)
	}
}
