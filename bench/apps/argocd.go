package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/redisserver"
)

// argocdRun is one measurement of Argo CD's own application controller
// and repo server on the same workload, at Argo CD's defaults: the
// multi-call binary `make argocd` builds (ARGOCD_BINARY_NAME picks the
// component), Redis from Debian's redis-server, and the local cluster as
// the in-cluster destination (ARGOCD_FAKE_IN_CLUSTER, as Argo CD's own
// local setup runs it).
type argocdRun struct {
	n       int
	timeout time.Duration
	bin     string // Argo CD's binary
}

func (o argocdRun) measure(ctx context.Context) (*figures, error) {
	s, w, err := newStandardSite(ctx, o.n)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := argocdSettings(ctx, s.client, w.ns); err != nil {
		return nil, err
	}
	measured, err := startArgoCD(s, w.ns, o.bin)
	if err != nil {
		return nil, err
	}
	defer measured.stop()
	fmt.Printf("apps=%d, Argo CD's application controller and repo server (%s)\n", o.n, o.bin)
	return measurePrograms(ctx, s, w, o.n, o.timeout, measured, func(ctx context.Context) (int64, error) {
		return refreshAll(ctx, s.client, w, o.n)
	})
}

// startArgoCD starts Redis, the repo server and the application
// controller, each with its defaults but for the ports, and returns the
// two Argo CD components (Redis is not counted).
func startArgoCD(s *site, ns, bin string) (_ programs, err error) {
	var started programs
	defer func() {
		if err != nil {
			started.stop()
		}
	}()
	for _, d := range []string{"redis", "tmp", "tls", "ssh"} {
		if err := os.MkdirAll(filepath.Join(s.dir, "argocd", d), 0o755); err != nil {
			return nil, err
		}
	}
	redis, stopRedis, err := redisserver.Run(filepath.Join(s.dir, "argocd", "redis"))
	if err != nil {
		return nil, err
	}
	s.onClose(stopRedis)
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return nil, err
		}
	}
	env := func(component string) []string {
		return []string{"ARGOCD_BINARY_NAME=" + component, "KUBECONFIG=" + s.cluster.KubeconfigPath,
			"ARGOCD_FAKE_IN_CLUSTER=true", "ARGOCD_GPG_ENABLED=false",
			"ARGOCD_TLS_DATA_PATH=" + filepath.Join(s.dir, "argocd", "tls"),
			"ARGOCD_SSH_DATA_PATH=" + filepath.Join(s.dir, "argocd", "ssh"),
			"TMPDIR=" + filepath.Join(s.dir, "argocd", "tmp")}
	}
	repoServer, err := startProgram("argocd-repo-server", bin, []string{"--redis", redis,
		"--port", strconv.Itoa(ports[0]), "--metrics-port", strconv.Itoa(ports[1])}, env("argocd-repo-server"))
	if err != nil {
		return nil, err
	}
	started = append(started, repoServer)
	controller, err := startProgram("argocd-application-controller", bin, []string{"--redis", redis,
		"--namespace", ns, "--repo-server", "127.0.0.1:" + strconv.Itoa(ports[0]),
		"--metrics-port", strconv.Itoa(ports[2])}, env("argocd-application-controller"))
	if err != nil {
		return nil, err
	}
	return append(started, controller), nil
}

// argocdSettings creates what Argo CD's install would: the settings
// ConfigMaps and Secret (found by Argo CD's part-of label) and the default
// project, which Argo CD's API server makes on its first start.
func argocdSettings(ctx context.Context, c client.Client, ns string) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}}
	}
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: meta("argocd-cm")},
		&corev1.ConfigMap{ObjectMeta: meta("argocd-rbac-cm")},
		&corev1.ConfigMap{ObjectMeta: meta("argocd-cmd-params-cm")},
		&corev1.Secret{ObjectMeta: meta("argocd-secret"), Data: map[string][]byte{"server.secretkey": []byte(hex.EncodeToString(key))}},
		&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestrictionItem{{Group: "*", Kind: "*"}},
		}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// refreshAll announces a commit to every app as Argo CD's webhook handler
// does: a normal refresh requested by annotation. It returns the requests
// it made.
func refreshAll(ctx context.Context, c client.Client, w workload, n int) (int64, error) {
	var made atomic.Int64
	patch := client.RawPatch("application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"`+v1alpha1.AnnotationRefresh+`":"normal"}}}`))
	err := parallel(n, 16, func(i int) error {
		made.Add(1)
		return c.Patch(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: w.app(i).Name, Namespace: w.ns}}, patch)
	})
	return made.Load(), err
}
