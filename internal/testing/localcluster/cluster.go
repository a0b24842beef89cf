package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// serviceIP is the first address of the service range, the in-cluster
// "kubernetes" Service; the serving certificate names it.
const (
	serviceCIDR = "10.96.0.0/16"
	serviceIP   = "10.96.0.1"
)

// Cluster is a running local control plane.
type Cluster struct {
	// Config reaches the API server as a cluster administrator.
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file for the same administrator.
	KubeconfigPath string
	// Dir holds data, certificates, kubeconfigs and logs.
	Dir string

	opts    Options
	pki     *pki
	ownsDir bool
	procs   []*process
}

// Start brings a cluster up and waits until it serves requests (and, with
// Workloads, until its node is Ready). On error nothing is left running.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, err
	}
	bins, err := opts.binaries()
	if err != nil {
		return nil, err
	}

	c := &Cluster{opts: opts, Dir: opts.Dir}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "capstan-cluster-"); err != nil {
			return nil, err
		}
		c.ownsDir = true
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	for _, d := range []string{"logs", "etcd", "pki", "kubeconfig"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	if c.pki, err = newPKI(filepath.Join(c.Dir, "pki")); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	apiPort := ports[2]

	if err := c.start("etcd", bins["etcd"], etcdArgs(c.Dir, etcdURL, peerURL)); err != nil {
		return nil, err
	}
	if err := c.start("kube-apiserver", bins["kube-apiserver"], apiserverArgs(c.pki, etcdURL, apiPort, c.opts)); err != nil {
		return nil, err
	}

	server := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	c.Config = c.restConfig(server, "admin")
	if c.KubeconfigPath, err = c.writeKubeconfig(server, "admin"); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	if !opts.Workloads {
		return c, nil
	}
	if err := c.startWorkloadComponents(ctx, server, bins); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(name, bin string, args []string) error {
	p, err := startProcess(name, bin, args, filepath.Join(c.Dir, "logs"))
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

func etcdArgs(dir, clientURL, peerURL string) []string {
	return []string{
		"--name=capstan",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=capstan=" + peerURL,
		// A throwaway cluster needs no durability; fsync dominates write latency.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

func apiserverArgs(p *pki, etcdURL string, port int, opts Options) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + p.certFile,
		"--tls-private-key-file=" + p.keyFile,
		"--client-ca-file=" + p.caFile,
		"--token-auth-file=" + p.tokenFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.saPubFile,
		"--service-account-signing-key-file=" + p.saKeyFile,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		"--profiling=" + strconv.FormatBool(opts.Profiling),
		"--v=1",
	}
	if opts.TokenWebhookConfig != "" {
		args = append(args, "--authentication-token-webhook-config-file="+opts.TokenWebhookConfig, "--authentication-token-webhook-version=v1")
	}
	return args
}

// waitReady polls /readyz until the API server answers 200.
func (c *Cluster) waitReady(ctx context.Context) error {
	transport, err := rest.TransportFor(c.Config)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	url := c.Config.Host + "/readyz"
	for {
		if err := c.anyExited(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready at %s: %w (logs in %s)", url, ctx.Err(), c.LogDir())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) anyExited() error {
	for _, p := range c.procs {
		if err := p.exited(); err != nil {
			return err
		}
	}
	return nil
}

// Clientset returns a typed client for the administrator.
func (c *Cluster) Clientset() (*kubernetes.Clientset, error) {
	return kubernetes.NewForConfig(c.Config)
}

// LogDir is the directory with one <component>.log file per process.
func (c *Cluster) LogDir() string { return filepath.Join(c.Dir, "logs") }

// Stop stops every process, newest first, and removes Dir when Start made it.
func (c *Cluster) Stop() error {
	var errs []error
	for i := len(c.procs) - 1; i >= 0; i-- {
		if err := c.procs[i].stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	c.procs = nil
	if c.ownsDir && c.Dir != "" {
		if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// StopAPIServer stops kube-apiserver, and only it, as an outage of the
// control plane would; the other components keep running and retry.
func (c *Cluster) StopAPIServer() error {
	p := c.process("kube-apiserver")
	if p == nil {
		return errors.New("kube-apiserver is not running")
	}
	return p.stop(10 * time.Second)
}

// StartAPIServer starts kube-apiserver again, on the same address and
// data, and waits until it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	for i, p := range c.procs {
		if p.name != "kube-apiserver" {
			continue
		}
		if p.exited() == nil {
			return errors.New("kube-apiserver is already running")
		}
		next, err := startProcess(p.name, p.bin, p.args, c.LogDir())
		if err != nil {
			return err
		}
		c.procs[i] = next
		return c.waitReady(ctx)
	}
	return errors.New("the cluster has no kube-apiserver")
}

func (c *Cluster) process(name string) *process {
	for _, p := range c.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// Pids returns the process ids of the running components.
func (c *Cluster) Pids() []int {
	pids := make([]int, 0, len(c.procs))
	for _, p := range c.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	return pids
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// NewNamespace creates a namespace with a generated name for one test and
// deletes it when the test ends. A test that asks for one needs the
// cluster: under -short, where none is started, it is skipped.
func (c *Cluster) NewNamespace(t testing.TB) string {
	t.Helper()
	Need(t)
	cs, err := c.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}
