package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// VersionTTL is how long a cluster's last answer about its version, and
// whether it answered, is reported before the cluster is asked again.
const VersionTTL = 30 * time.Second

// versionTimeout bounds one request for a cluster's version.
const versionTimeout = 10 * time.Second

// Version is what a cluster last answered about its Kubernetes version.
type Version struct {
	// Version is the cluster's version as Argo CD reports it, major.minor
	// ("1.36"); the last known one while the cluster does not answer, and
	// empty until it first did.
	Version string
	// Connected is whether the last request reached the cluster; Message
	// says why not.
	Connected bool
	Message   string
	// At is when the last request ended; the zero time means none ended yet.
	At time.Time
}

// VersionProbe keeps a cluster's last Version and asks again, in the
// background, once it is VersionTTL old: a caller never waits on a
// cluster that does not answer. The zero value is ready to use.
type VersionProbe struct {
	mu       sync.Mutex
	last     Version
	inFlight bool
}

// Get returns what the cluster last answered, and asks again when that
// is older than VersionTTL (at once the first time, when the result has a
// zero At), through the REST client of the cluster's API server connect
// returns (a clientset's Discovery().RESTClient(), say).
func (p *VersionProbe) Get(connect func() (rest.Interface, error)) Version {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.inFlight && time.Since(p.last.At) >= VersionTTL {
		p.inFlight = true
		go p.probe(connect)
	}
	return p.last
}

func (p *VersionProbe) probe(connect func() (rest.Interface, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	client, err := connect()
	var v string
	if err == nil {
		v, err = ServerVersion(ctx, client)
	}
	result := Version{Version: v, Connected: err == nil, At: time.Now()}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight = false
	if err != nil {
		result.Version, result.Message = p.last.Version, err.Error()
	}
	p.last = result
}

// ServerVersion asks the API server client reaches for its version, as
// Argo CD reports it: major.minor ("1.36").
func ServerVersion(ctx context.Context, client rest.Interface) (string, error) {
	body, err := client.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("reading the cluster's version: %w", err)
	}
	return info.Major + "." + info.Minor, nil
}
