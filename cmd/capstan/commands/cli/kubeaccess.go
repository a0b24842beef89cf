package cli

import (
	"cmp"
	"context"
	"fmt"
	"net"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/kube"
)

// Two ways to reach an install through the kubeconfig (--kube-context, the
// context's namespace) instead of an API server's address, as Argo CD's
// CLI has:
//
//   - --core needs no API server: the CLI runs one of its own in this
//     process, headless (no login, nothing written to the install's
//     settings), on a loopback port, and renders sources itself. Commands
//     run with the kubeconfig user's rights.
//   - --port-forward reaches the install's API server through a port
//     forward to its pod (app.kubernetes.io/name=--server-name, port 8080),
//     as its users, with a login.
//
// Either starts once per command line; release stops it.

// apiServerPort is the port of the API server's pod.
const apiServerPort = 8080

// kubeAccess is what --core and --port-forward started.
type kubeAccess struct {
	addr string
	err  error
	stop func()
}

// release stops what the commands started.
func (f *clientFlags) release() {
	if f.kube.stop != nil {
		f.kube.stop()
	}
}

// viaKube returns how to reach the install through the kubeconfig, with
// --core or else --port-forward; it starts what it needs the first time.
func (f *clientFlags) viaKube(core bool) (apiclient.Server, error) {
	f.kubeOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cleanup := func() {}
		if core {
			f.kube.addr, cleanup, f.kube.err = startCore(ctx, f.kubeContext)
		} else {
			f.kube.addr, f.kube.err = f.forwardToServer(ctx)
		}
		f.kube.stop = func() { cancel(); cleanup() }
	})
	if f.kube.err != nil {
		return apiclient.Server{}, f.kube.err
	}
	if core {
		return apiclient.Server{Server: f.kube.addr, PlainText: true}, nil
	}
	// The pod's certificate names the pod's host, not the forward's.
	return apiclient.Server{Server: f.kube.addr, Insecure: true, PlainText: f.plaintext, GRPCWeb: f.grpcWeb, GRPCWebRootPath: f.grpcWebRootPath}, nil
}

// loadKubeconfig reads the kubeconfig's context kubeContext (empty: the
// current one) and its namespace.
func loadKubeconfig(kubeContext string) (*rest.Config, string, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(),
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	return cfg, ns, nil
}

// forwardToServer forwards a loopback port to the install's API server pod.
func (f *clientFlags) forwardToServer(ctx context.Context) (string, error) {
	cfg, ns, err := loadKubeconfig(f.kubeContext)
	if err != nil {
		return "", fmt.Errorf("--port-forward: %w", err)
	}
	name := *f.componentNames["server-name"]
	addr, err := kube.PortForward(ctx, cfg, cmp.Or(f.portForwardNamespace, ns), "app.kubernetes.io/name="+name, apiServerPort)
	if err != nil {
		return "", fmt.Errorf("--port-forward: %w (the API server's pod is found by --server-name or ARGOCD_SERVER_NAME, in --port-forward-namespace)", err)
	}
	return addr, nil
}

// startCore serves the API of the install kubeContext names on a loopback
// port until ctx ends; cleanup removes its render cache.
func startCore(ctx context.Context, kubeContext string) (addr string, cleanup func(), err error) {
	cleanup = func() {}
	cfg, ns, err := loadKubeconfig(kubeContext)
	if err != nil {
		return "", cleanup, fmt.Errorf("--core: %w", err)
	}
	srv, cleanup, err := cmdutil.CoreServer(ctx, cfg, ns)
	if err != nil {
		return "", cleanup, fmt.Errorf("--core: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", cleanup, err
	}
	go func() { _ = srv.Serve(ctx, l) }()
	return l.Addr().String(), cleanup, nil
}

// kubeClient is a client of the install reached with --core or
// --port-forward (core false), with token.
func (f *clientFlags) kubeClient(core bool, token string) (*apiclient.Client, error) {
	s, err := f.viaKube(core)
	if err != nil {
		return nil, err
	}
	return apiclient.Connect(s, token, f.conn)
}
