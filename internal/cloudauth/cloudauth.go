package cloudauth

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultTimeout bounds one token request when Options set none.
const DefaultTimeout = 15 * time.Second

// maxCached bounds each cache: past it, the cache starts again empty.
const maxCached = 256

// maxBody bounds a token service's answer.
const maxBody = 1 << 20

// Options shape a Source.
type Options struct {
	// HTTPClient sends every token request but AWS's, which the AWS SDK
	// sends itself (trusting AWS_CA_BUNDLE). Default: a client on
	// http.DefaultTransport (the system's trusted certificates and the
	// environment's proxy).
	HTTPClient *http.Client
	// Timeout bounds one token request. Default DefaultTimeout.
	Timeout time.Duration
	// AzureIdentityHosts are host names, beyond Azure DevOps' and the
	// Azure Container Registries', that may receive tokens bought with
	// the process's own Azure identity (an Azure DevOps Server taking
	// Entra ID tokens). Default none.
	AzureIdentityHosts []string
}

// Source buys tokens and keeps them, and the credentials that bought
// them, for reuse. It is safe for concurrent use.
type Source struct {
	opts Options

	mu     sync.Mutex
	cached map[string]any
}

// New returns a Source shaped by opts.
func New(opts Options) *Source {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: http.DefaultTransport}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Source{opts: opts, cached: map[string]any{}}
}

// Default is the Source repository credentials use.
var Default = New(Options{})

// remember returns what the cache holds under the digest of key, or
// stores and returns what build makes; a build that fails is not kept.
func remember[T any](s *Source, key string, build func() (T, error)) (T, error) {
	sum := sha256.Sum256([]byte(key))
	digest := hex.EncodeToString(sum[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.cached[digest].(T); ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	if len(s.cached) >= maxCached {
		s.cached = map[string]any{}
	}
	s.cached[digest] = v
	return v, nil
}

// readBody reads at most maxBody bytes of an answer.
func readBody(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("the answer is larger than %d bytes", maxBody)
	}
	return data, nil
}
