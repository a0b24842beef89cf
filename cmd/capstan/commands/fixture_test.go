package commands

import (
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/server"
	"github.com/capstan-cd/capstan/internal/settings"
)

// capstanFixture is an API server (TLS on 127.0.0.1, self-signed), optionally
// with a controller, in a fresh control namespace, and a CLI config file.
type capstanFixture struct {
	t        *testing.T
	c        client.Client
	ns       string
	addr     string
	password string
	config   string
	// flags are added to every command, such as --grpc-web.
	flags []string
	// token is the admin session the REST helpers use, made on first use.
	token string
}

func startCapstan(t *testing.T, withController bool) *capstanFixture {
	localcluster.Need(t)
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(kubeCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := kubeCluster.NewNamespace(t)
	renderer := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second})
	srv, err := server.New(ctx, server.Options{Client: c, Config: kubeCluster.Config, Renderer: renderer, Namespace: ns,
		EnableGZip:    true, // as capstan server runs by default
		AppSetPreview: cmdutil.AppSetPreview(renderer, c, ns, applicationset.SCMPolicy{})})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 2)
	go func() { _ = srv.Serve(ctx, l); done <- struct{}{} }()
	waits := 1
	if withController {
		waits++
		go func() {
			_ = controller.Run(ctx, controller.Options{Config: kubeCluster.Config, Namespace: ns, Renderer: renderer, Resync: time.Hour, RepoPoll: time.Hour,
				Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
			done <- struct{}{}
		}()
	}
	t.Cleanup(func() {
		cancel()
		for range waits {
			<-done
		}
	})
	initial := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: settings.InitialAdminSecretName}, initial); err != nil {
		t.Fatal(err)
	}
	return &capstanFixture{t: t, c: c, ns: ns, addr: l.Addr().String(), password: string(initial.Data["password"]), config: filepath.Join(t.TempDir(), "config")}
}

// run runs the CLI with the fixture's config file and returns its exit
// code, standard output and standard error.
func (f *capstanFixture) run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Execute(append(append(args, "--config", f.config), f.flags...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// login logs the CLI in as admin.
func (f *capstanFixture) login() {
	f.t.Helper()
	if code, stdout, stderr := f.run("login", f.addr, "--username", "admin", "--password", f.password, "--insecure"); code != 0 {
		f.t.Fatalf("login: exit %d, %q %q", code, stdout, stderr)
	}
}

// expect runs the CLI, fails the test unless it exits with want, and
// returns its standard output.
func (f *capstanFixture) expect(want int, args ...string) string {
	f.t.Helper()
	code, stdout, stderr := f.run(args...)
	if code != want {
		f.t.Fatalf("capstan %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout
}

// overBothAPIs runs a CLI test over REST and again with --grpc-web.
func overBothAPIs(t *testing.T, test func(t *testing.T, flags ...string)) {
	t.Run("REST", func(t *testing.T) { test(t) })
	t.Run("gRPC-Web", func(t *testing.T) { test(t, "--grpc-web") })
}

// get GETs an API path as admin and decodes the JSON answer into out.
func (f *capstanFixture) get(path string, out any) error {
	status, data, err := f.call(http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s: %d: %s", path, status, data)
	}
	return json.Unmarshal(data, out)
}

// call makes one REST call as admin and returns the status and body.
func (f *capstanFixture) call(method, path string, body []byte) (int, []byte, error) {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	base := "https://" + f.addr
	if f.token == "" {
		login, _ := json.Marshal(map[string]string{"username": "admin", "password": f.password})
		resp, err := hc.Post(base+"/api/v1/session", "application/json", bytes.NewReader(login))
		if err != nil {
			return 0, nil, err
		}
		var session struct{ Token string }
		err = json.NewDecoder(resp.Body).Decode(&session)
		_ = resp.Body.Close()
		if err != nil {
			return 0, nil, fmt.Errorf("logging in: %w", err)
		}
		f.token = session.Token
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}
