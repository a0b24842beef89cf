package commands

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/profiler"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/cache"
	"github.com/capstan-cd/capstan/internal/repo/reposerver"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/redisserver"
)

var kubeCluster *localcluster.Cluster

func TestMain(m *testing.M) {
	// The repo server's render workers, and an EKS cluster's exec plugin,
	// are this program run again with repo-render-worker or k8s-auth, as
	// the capstan binary is.
	if len(os.Args) > 1 && (os.Args[1] == "repo-render-worker" || os.Args[1] == "k8s-auth") {
		os.Exit(Execute(os.Args[1:], os.Stdout, os.Stderr))
	}
	// Workloads: Deployments get pods (kwok plays their kubelet), whose
	// logs the app logs tests read.
	os.Exit(localcluster.RunTests(m, localcluster.Options{Workloads: true}, &kubeCluster))
}

// TestRepoServerUsesRepositorySecrets runs `capstan repo-server` against a
// real API server holding a repository Secret, and renders a private
// repository through it over gRPC.
func TestRepoServerUsesRepositorySecrets(t *testing.T) {
	localcluster.Need(t)
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "private")
	remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: private}\n"})

	cs := kubernetes.NewForConfigOrDie(kubeCluster.Config)
	ctx := context.Background()
	ns := kubeCluster.NewNamespace(t)
	_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "private-repo", Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}},
		StringData: map[string]string{"url": remote.URL, "username": srv.Username, "password": srv.Password},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	redisAddr := redisserver.Start(t)
	profilerSetting := filepath.Join(t.TempDir(), "profiler.enabled")
	t.Setenv(profiler.PathEnv, profilerSetting) // reposerver.profile.enabled, as the install mounts it
	client, metricsPort := startRepoServer(t, ns, redisAddr, "--parallelismlimit", "2")
	if resp := renderThrough(t, client, remote.URL); len(resp.Objects) != 1 || resp.Objects[0].GetName() != "private" {
		t.Errorf("objects = %v", resp.Objects)
	}
	rc, err := cache.NewRedis(ctx, cache.RedisOptions{Addr: redisAddr})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if n, err := rc.Keys(ctx); err != nil || n == 0 {
		t.Errorf("the render was not cached in Redis: %d keys, %v", n, err)
	}
	// Its metrics port counts the Git requests, as Argo CD's repo server's.
	resp2, err := http.Get("http://127.0.0.1:" + metricsPort + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	for _, want := range []string{`argocd_git_request_total{repo="` + remote.URL + `",request_type="ls-remote"}`,
		`argocd_git_request_total{repo="` + remote.URL + `",request_type="fetch"}`, "go_goroutines",
		`argocd_redis_request_total{command="set",failed="false",initiator="argocd-repo-server"}`,
		"argocd_repo_parallelism_wait_duration_seconds_count 1"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the repo server's metrics lack %s", want)
		}
	}
	// The pprof endpoints answer only while the profiler setting is "true".
	for _, tc := range []struct {
		setting string
		want    int
	}{{"", http.StatusUnauthorized}, {"true", http.StatusOK}, {"false", http.StatusUnauthorized}} {
		if tc.setting != "" {
			if err := os.WriteFile(profilerSetting, []byte(tc.setting), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.Get("http://127.0.0.1:" + metricsPort + "/debug/pprof/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("pprof with the setting %q: %d, want %d", tc.setting, resp.StatusCode, tc.want)
		}
	}
}

// startRepoServer runs `capstan repo-server` for the control namespace ns
// (with more flags, if given) until the test ends, and dials it; it
// returns the client and the metrics port.
func startRepoServer(t *testing.T, ns, redisAddr string, flags ...string) (*reposerver.Client, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	host, port, _ := net.SplitHostPort(addr)
	metricsLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, metricsPort, _ := net.SplitHostPort(metricsLis.Addr().String())
	_ = metricsLis.Close()
	t.Setenv("KUBECONFIG", kubeCluster.KubeconfigPath)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		root := NewRoot()
		root.SetArgs(append([]string{"repo-server", "--address", host, "--port", port, "--metrics-address", "127.0.0.1", "--metrics-port", metricsPort,
			"--root", t.TempDir(), "--namespace", ns, "--redis", redisAddr}, flags...))
		root.SetErr(&bytes.Buffer{})
		done <- root.ExecuteContext(runCtx)
	}()
	client, err := reposerver.Dial(addr, reposerver.ClientTLS{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("repo-server exited with %v", err)
		}
	})
	return client, metricsPort
}

// renderThrough renders the app directory of repoURL through the repo
// server, waiting for it to serve.
func renderThrough(t *testing.T, client *reposerver.Client, repoURL string) *repo.Response {
	t.Helper()
	req := &repo.Request{AppName: "p", Sources: []v1alpha1.ApplicationSource{{RepoURL: repoURL, Path: "app"}}}
	var resp *repo.Response
	var err error
	eventually.String(t, "the repo server serving", func() string {
		if resp, err = client.Render(context.Background(), req); reposerver.IsCode(err, "Unavailable") {
			return err.Error()
		}
		return ""
	})
	if err != nil {
		t.Fatalf("render %s through the repo server: %v", repoURL, err)
	}
	return resp
}
