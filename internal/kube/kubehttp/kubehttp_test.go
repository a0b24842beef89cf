package kubehttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/internal/testing/faultproxy"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &cluster))
}

// TestRetryRidesOutServerErrors sends a create through a front that
// answers 503 and then 429 before it forwards to a real API server: with
// ARGOCD_K8SCLIENT_RETRY_MAX the third try creates the ConfigMap (its
// body sent again), without it the first answer is the client's error.
func TestRetryRidesOutServerErrors(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	front := faultproxy.NewKubeFront(t, cluster.Config)
	ctx := context.Background()

	cfg := rest.CopyConfig(front.Config)
	Options{RetryMax: 2, RetryBaseBackoff: time.Millisecond}.Apply(cfg)
	front.Fail(http.StatusServiceUnavailable, http.StatusTooManyRequests)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "retried"}, Data: map[string]string{"k": "v"}}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create after two failures: %v", err)
	}
	if n := front.Requests(http.MethodPost); n != 3 {
		t.Errorf("front saw %d POSTs, want 3", n)
	}
	got, err := kubernetes.NewForConfigOrDie(cluster.Config).CoreV1().ConfigMaps(ns).Get(ctx, "retried", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("the API server holds %v, %v", got, err)
	}

	// Out of tries, the last answer stands; 501 is never retried.
	front.Fail(http.StatusBadGateway, http.StatusBadGateway, http.StatusBadGateway)
	_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Get(ctx, "retried", metav1.GetOptions{})
	if err == nil || (!apierrors.IsUnexpectedServerError(err) && !strings.Contains(err.Error(), "Bad Gateway")) {
		t.Errorf("three 502s with two retries: %v", err)
	}
	before := front.Requests(http.MethodGet)
	front.Fail(http.StatusNotImplemented)
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Get(ctx, "retried", metav1.GetOptions{}); err == nil {
		t.Error("a 501 was retried")
	}
	if n := front.Requests(http.MethodGet) - before; n != 1 {
		t.Errorf("a 501 was sent %d times", n)
	}

	// Untuned, a 503 is the caller's.
	front.Fail(http.StatusServiceUnavailable)
	if _, err := kubernetes.NewForConfigOrDie(front.Config).CoreV1().ConfigMaps(ns).Get(ctx, "retried", metav1.GetOptions{}); err == nil {
		t.Error("an untuned client rode out a 503")
	}
}

// TestRetryStopsWithTheContext: a caller that gives up is not kept
// waiting for the backoff.
func TestRetryStopsWithTheContext(t *testing.T) {
	localcluster.Need(t)
	front := faultproxy.NewKubeFront(t, cluster.Config)
	cfg := rest.CopyConfig(front.Config)
	Options{RetryMax: 5, RetryBaseBackoff: time.Hour}.Apply(cfg)
	front.Fail(http.StatusServiceUnavailable)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for front.Requests(http.MethodGet) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the context's end", err)
	}
}

// TestConnectionTuning: a tuned config still reaches a real API server
// over its TLS settings, its clients share one transport with the tuned
// limits, and a server that never finishes the handshake fails it by the
// tuned timeout.
func TestConnectionTuning(t *testing.T) {
	localcluster.Need(t)
	cfg := rest.CopyConfig(cluster.Config)
	Options{MaxIdleConns: 7, IdleConnTimeout: time.Minute, TCPTimeout: 5 * time.Second, TCPKeepAlive: 15 * time.Second}.Apply(cfg)
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	first, second := baseTransport(t, cfg), baseTransport(t, rest.CopyConfig(cfg))
	if first != second {
		t.Error("two clients of one tuned config do not share a transport")
	}
	if first.MaxIdleConnsPerHost != 7 || first.MaxConnsPerHost != 7 || first.IdleConnTimeout != time.Minute || first.TLSClientConfig == nil {
		t.Errorf("transport: idle %d/host, %d conns/host, idle timeout %v, TLS %v",
			first.MaxIdleConnsPerHost, first.MaxConnsPerHost, first.IdleConnTimeout, first.TLSClientConfig != nil)
	}

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	mute := &rest.Config{Host: "https://" + silent.Addr().String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	Options{TLSHandshakeTimeout: 50 * time.Millisecond}.Apply(mute)
	_, err = kubernetes.NewForConfigOrDie(mute).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
	if err == nil || !strings.Contains(err.Error(), "TLS handshake timeout") {
		t.Fatalf("a mute server: %v", err)
	}
}

// baseTransport is the *http.Transport under cfg's wrappers.
func baseTransport(t *testing.T, cfg *rest.Config) *http.Transport {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := underlying(rt)
	if base == nil {
		t.Fatalf("%T wraps no *http.Transport", rt)
	}
	return base
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want Options
		err  string
	}{
		{env: nil, want: Options{}},
		{env: map[string]string{EnvTCPTimeout: "45s", EnvTCPKeepAlive: "1m", EnvTLSHandshakeTimeout: "5s",
			EnvTCPIdleTimeout: "5m", EnvMaxIdleConnections: "500", EnvRetryMax: "3", EnvRetryBaseBackoff: "250"},
			want: Options{TCPTimeout: 45 * time.Second, TCPKeepAlive: time.Minute, TLSHandshakeTimeout: 5 * time.Second,
				IdleConnTimeout: 5 * time.Minute, MaxIdleConns: 500, RetryMax: 3, RetryBaseBackoff: 250 * time.Millisecond}},
		{env: map[string]string{EnvTCPTimeout: "30"}, err: `ARGOCD_K8S_TCP_TIMEOUT="30": not a duration`},
		{env: map[string]string{EnvRetryMax: "-1"}, err: `ARGOCD_K8SCLIENT_RETRY_MAX="-1": not a count`},
		{env: map[string]string{EnvRetryBaseBackoff: "1s"}, err: `ARGOCD_K8SCLIENT_RETRY_BASE_BACKOFF="1s": not a number of milliseconds`},
	} {
		got, err := FromEnv(func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: got %v, want %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: got %+v, %v; want %+v", tc.env, got, err, tc.want)
		}
	}
}
