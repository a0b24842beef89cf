package commands

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// useKubeconfigIn points KUBECONFIG, for the test, at the local cluster's
// kubeconfig with namespace as its context's namespace.
func useKubeconfigIn(t *testing.T, namespace string) {
	localcluster.Need(t)
	t.Helper()
	kubeconfig, err := clientcmd.LoadFromFile(kubeCluster.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig.Contexts[kubeconfig.CurrentContext].Namespace = namespace
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
}

// TestCoreMode runs the CLI with --core: no API server and no login, the
// install reached through the kubeconfig's context and its namespace, and
// sources rendered by the CLI itself. login --core saves a context that
// keeps working that way.
func TestCoreMode(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true) // the install: its controller and settings
	useKubeconfigIn(t, f.ns)
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	commit := remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})

	f.expect(0, "--core", "app", "create", "web", "--repo", remote.URL, "--path", "app",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	if out := f.expect(0, "--core", "app", "list", "-o", "name"); strings.TrimSpace(out) != f.ns+"/web" && strings.TrimSpace(out) != "web" {
		t.Errorf("app list:\n%s", out)
	}
	if out := f.expect(1, "--core", "app", "diff", "web"); !strings.Contains(out, "+  v: one") {
		t.Errorf("diff rendered by the CLI:\n%s", out)
	}
	if out := f.expect(0, "--core", "app", "sync", "web"); !strings.Contains(out, commit) || !strings.Contains(out, "Succeeded") {
		t.Errorf("sync:\n%s", out)
	}
	if out := f.expect(0, "--core", "account", "get-user-info"); !strings.Contains(out, "Logged In: true") {
		t.Errorf("get-user-info:\n%s", out)
	}

	// A saved core context needs the flag no more.
	if out := f.expect(0, "login", "--core"); !strings.Contains(out, "Context 'kubernetes' updated") {
		t.Errorf("login --core:\n%s", out)
	}
	if data, _ := os.ReadFile(f.config); !strings.Contains(string(data), "core: true") {
		t.Errorf("the saved context is not a core one:\n%s", data)
	}
	if out := f.expect(0, "app", "get", "web"); !strings.Contains(out, "Synced") || !strings.Contains(out, "settings") {
		t.Errorf("app get through the saved context:\n%s", out)
	}
	if out := f.expect(0, "proj", "list"); !strings.Contains(out, "default") {
		t.Errorf("proj list:\n%s", out)
	}

	// A context that does not exist is the kubeconfig's error, named.
	if _, _, stderr := f.run("--core", "--kube-context", "nowhere", "app", "list"); !strings.Contains(stderr, "nowhere") {
		t.Errorf("unknown kube context: %q", stderr)
	}
}

// TestPortForward reaches Capstan's API server through a port forward to
// its pod, found by Argo CD's label in the kubeconfig's namespace (the
// local cluster's fake node sends the pod's port 8080 on to the test's
// server): Capstan's CLI and Argo CD's log in that way, and a later
// command forwards anew.
func TestPortForward(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	useKubeconfigIn(t, f.ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "argocd-server-0", Namespace: f.ns, Labels: map[string]string{"app.kubernetes.io/name": "argocd-server"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "capstan:test"}}}}
	if err := f.c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := kubeCluster.ForwardPort(ctx, f.ns, pod.Name, 8080, f.addr); err != nil {
		t.Fatal(err)
	}
	waitForward(ctx, t, f.ns)

	if out := f.expect(0, "login", "--port-forward", "--username", "admin", "--password", f.password); !strings.Contains(out, "Context 'port-forward' updated") {
		t.Errorf("login --port-forward:\n%s", out)
	}
	if out := f.expect(0, "account", "get-user-info"); !strings.Contains(out, "admin") {
		t.Errorf("through the saved context:\n%s", out)
	}
	if out := f.expect(0, "version", "--port-forward-namespace", f.ns); !strings.Contains(out, "capstan-server") && !strings.Contains(out, "argocd-server") {
		t.Errorf("version through --port-forward-namespace:\n%s", out)
	}
	if _, _, stderr := f.run("app", "list", "--port-forward", "--server-name", "nothing-here"); !strings.Contains(stderr, "app.kubernetes.io/name=nothing-here") {
		t.Errorf("no pod for --server-name: %q", stderr)
	}

	argocd := argocdcli.New(t)
	argocd.Expect(0, "login", "--port-forward", "--port-forward-namespace", f.ns, "--username", "admin", "--password", f.password)
	if out := argocd.Expect(0, "account", "get-user-info", "--port-forward", "--port-forward-namespace", f.ns); !strings.Contains(out, "admin") {
		t.Errorf("Argo CD's CLI through the port forward:\n%s", out)
	}
}

// waitForward waits until the fake node forwards the API server's pod's
// port: kwok learns of the pod and its PortForward by watching.
func waitForward(ctx context.Context, t *testing.T, namespace string) {
	localcluster.Need(t)
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	eventually.Within(t, eventually.Options{Interval: 200 * time.Millisecond}, "the port forward working", func() string {
		addr, err := kube.PortForward(ctx, kubeCluster.Config, namespace, "app.kubernetes.io/name=argocd-server", 8080)
		if err != nil {
			return err.Error()
		}
		resp, err := client.Get("https://" + addr + "/healthz")
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		return ""
	})
}

// TestAdminDashboard: admin dashboard serves the web UI and the API on
// this machine with the kubeconfig's rights, as Argo CD's does, until it
// is stopped.
func TestAdminDashboard(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	useKubeconfigIn(t, f.ns)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		root := NewRoot()
		root.SetArgs([]string{"admin", "dashboard", "--address", "127.0.0.1", "--port", port})
		root.SetOut(&out)
		root.SetErr(&bytes.Buffer{})
		done <- root.ExecuteContext(ctx)
	}()
	base := "http://127.0.0.1:" + port
	eventually.String(t, "the dashboard's API", func() string {
		resp, err := http.Get(base + "/api/v1/applications")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.Status
		}
		return ""
	})
	resp, err := http.Get(base + "/applications")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "<!doctype html>") {
		t.Errorf("the web UI's page: %.100s", page)
	}
	if !strings.Contains(out.String(), "UI is available at http://127.0.0.1:"+port) {
		t.Errorf("output: %q", out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("dashboard: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
