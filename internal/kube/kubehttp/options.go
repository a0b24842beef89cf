package kubehttp

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// The environment variables Argo CD's manifests set from
// argocd-cmd-params-cm's <component>.k8s.* and <component>.k8sclient.*
// keys.
const (
	EnvMaxIdleConnections  = "ARGOCD_K8S_CLIENT_MAX_IDLE_CONNECTIONS"
	EnvTCPTimeout          = "ARGOCD_K8S_TCP_TIMEOUT"
	EnvTCPKeepAlive        = "ARGOCD_K8S_TCP_KEEPALIVE"
	EnvTLSHandshakeTimeout = "ARGOCD_K8S_TLS_HANDSHAKE_TIMEOUT"
	EnvTCPIdleTimeout      = "ARGOCD_K8S_TCP_IDLE_TIMEOUT"
	EnvRetryMax            = "ARGOCD_K8SCLIENT_RETRY_MAX"
	EnvRetryBaseBackoff    = "ARGOCD_K8SCLIENT_RETRY_BASE_BACKOFF"
)

// Env lists every variable FromEnv reads.
var Env = []string{EnvMaxIdleConnections, EnvTCPTimeout, EnvTCPKeepAlive, EnvTLSHandshakeTimeout,
	EnvTCPIdleTimeout, EnvRetryMax, EnvRetryBaseBackoff}

// Options tune Kubernetes clients. A zero field keeps client-go's default
// (which Argo CD's defaults, in brackets, mostly equal).
type Options struct {
	// TCPTimeout bounds connecting to an API server (30 s).
	TCPTimeout time.Duration
	// TCPKeepAlive is the interval of TCP keep-alive probes (30 s).
	TCPKeepAlive time.Duration
	// TLSHandshakeTimeout bounds a TLS handshake (10 s).
	TLSHandshakeTimeout time.Duration
	// IdleConnTimeout closes a connection idle this long (client-go 90 s,
	// Argo CD 5 min).
	IdleConnTimeout time.Duration
	// MaxIdleConns bounds the idle connections, and the connections, kept
	// per API server (client-go 25 idle and no bound, Argo CD 500).
	MaxIdleConns int
	// RetryMax retries a request that failed to connect or was answered
	// 429 or 5xx (but 501) this many times; 0 never retries.
	RetryMax int
	// RetryBaseBackoff is the first wait between tries, doubled after each
	// and capped at 10 s (100 ms).
	RetryBaseBackoff time.Duration

	// clones are the tuned copies of client-go's cached transports, so
	// that clients sharing a transport still share one after tuning.
	clones *sync.Map
}

// FromEnv reads Options from Argo CD's variables through getenv (usually
// os.Getenv). Durations are Go durations ("45s"); the retry base backoff
// is in milliseconds. A value that cannot be read is an error naming its
// variable.
func FromEnv(getenv func(string) string) (Options, error) {
	var o Options
	var err error
	durations := []struct {
		env string
		to  *time.Duration
	}{{EnvTCPTimeout, &o.TCPTimeout}, {EnvTCPKeepAlive, &o.TCPKeepAlive},
		{EnvTLSHandshakeTimeout, &o.TLSHandshakeTimeout}, {EnvTCPIdleTimeout, &o.IdleConnTimeout}}
	for _, d := range durations {
		if v := getenv(d.env); v != "" {
			if *d.to, err = time.ParseDuration(v); err != nil || *d.to < 0 {
				return Options{}, fmt.Errorf("%s=%q: not a duration such as 30s", d.env, v)
			}
		}
	}
	counts := []struct {
		env string
		to  *int
	}{{EnvMaxIdleConnections, &o.MaxIdleConns}, {EnvRetryMax, &o.RetryMax}}
	for _, c := range counts {
		if v := getenv(c.env); v != "" {
			if *c.to, err = strconv.Atoi(v); err != nil || *c.to < 0 {
				return Options{}, fmt.Errorf("%s=%q: not a count", c.env, v)
			}
		}
	}
	if v := getenv(EnvRetryBaseBackoff); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 1 {
			return Options{}, fmt.Errorf("%s=%q: not a number of milliseconds", EnvRetryBaseBackoff, v)
		}
		o.RetryBaseBackoff = time.Duration(ms) * time.Millisecond
	}
	return o, nil
}

// IsZero reports whether o keeps every client-go default.
func (o Options) IsZero() bool {
	return o.TCPTimeout == 0 && o.TCPKeepAlive == 0 && o.TLSHandshakeTimeout == 0 && o.IdleConnTimeout == 0 &&
		o.MaxIdleConns == 0 && o.RetryMax == 0
}

// Apply tunes the clients cfg builds. Apply once per config: a copy of a
// tuned config is already tuned.
func (o Options) Apply(cfg *rest.Config) {
	if o.tunesConnections() {
		if o.clones == nil {
			o.clones = &sync.Map{}
		}
		cfg.Wrap(o.tune)
	}
	if o.RetryMax > 0 {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return &retryTransport{next: rt, max: o.RetryMax, backoff: o.backoff()}
		})
	}
}

func (o Options) tunesConnections() bool {
	return o.TCPTimeout > 0 || o.TCPKeepAlive > 0 || o.TLSHandshakeTimeout > 0 || o.IdleConnTimeout > 0 || o.MaxIdleConns > 0
}

func (o Options) backoff() time.Duration {
	if o.RetryBaseBackoff > 0 {
		return o.RetryBaseBackoff
	}
	return 100 * time.Millisecond
}

// tune returns a tuned copy of client-go's transport under rt, the same
// copy for the same transport. A round tripper with no *http.Transport
// underneath (a test's, a custom one) is kept.
func (o Options) tune(rt http.RoundTripper) http.RoundTripper {
	base := underlying(rt)
	if base == nil {
		return rt
	}
	if t, ok := o.clones.Load(base); ok {
		return t.(*http.Transport)
	}
	t := base.Clone()
	if o.TCPTimeout > 0 || o.TCPKeepAlive > 0 {
		// Replaces client-go's dialer (30 s and 30 s), and with it the
		// closing of connections when an exec plugin's client
		// certificate rotates: open connections stay authenticated.
		d := &net.Dialer{Timeout: or(o.TCPTimeout, 30*time.Second), KeepAlive: or(o.TCPKeepAlive, 30*time.Second)}
		t.DialContext = d.DialContext
	}
	if o.TLSHandshakeTimeout > 0 {
		t.TLSHandshakeTimeout = o.TLSHandshakeTimeout
	}
	if o.IdleConnTimeout > 0 {
		t.IdleConnTimeout = o.IdleConnTimeout
	}
	if o.MaxIdleConns > 0 {
		t.MaxIdleConns, t.MaxIdleConnsPerHost, t.MaxConnsPerHost = o.MaxIdleConns, o.MaxIdleConns, o.MaxIdleConns
	}
	actual, _ := o.clones.LoadOrStore(base, t)
	return actual.(*http.Transport)
}

// underlying is the *http.Transport rt wraps (client-go's cache wraps the
// transports it shares), or nil.
func underlying(rt http.RoundTripper) *http.Transport {
	for {
		switch r := rt.(type) {
		case *http.Transport:
			return r
		case utilnet.RoundTripperWrapper:
			rt = r.WrappedRoundTripper()
		default:
			return nil
		}
	}
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
