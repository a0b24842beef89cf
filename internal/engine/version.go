package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
)

// versionTTL is how long a destination's Kubernetes version, and whether
// it answered, is reported before it is asked again.
const versionTTL = 30 * time.Second

// versionTimeout bounds one request for a destination's version.
const versionTimeout = 10 * time.Second

// ClusterVersion is what a destination last answered about its version.
type ClusterVersion struct {
	// Version is the cluster's Kubernetes version ("1.36.3", say); empty
	// until it first answered.
	Version string
	// Connected is whether the last request reached the cluster.
	Connected bool
	// At is when the last request ended; the zero time means none ended
	// yet.
	At time.Time
}

// versionProbe keeps a destination's last ClusterVersion and asks again,
// in the background, once it is versionTTL old: a caller never waits on
// a cluster that does not answer.
type versionProbe struct {
	mu       sync.Mutex
	last     ClusterVersion
	inFlight bool
}

// Version returns what the destination last answered about its version,
// and asks again in the background when that is older than versionTTL
// (at once the first time, when the result has a zero At).
func (d *Destination) Version() ClusterVersion {
	p := &d.version
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.inFlight && time.Since(p.last.At) >= versionTTL {
		p.inFlight = true
		go p.probe(d)
	}
	return p.last
}

func (p *versionProbe) probe(d *Destination) {
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	var result ClusterVersion
	disc, err := discovery.NewDiscoveryClientForConfig(d.config)
	if err == nil {
		var body []byte
		body, err = disc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
		if err == nil {
			result.Version, err = parseVersion(body)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight = false
	result.At = time.Now()
	result.Connected = err == nil
	if !result.Connected {
		result.Version = p.last.Version // the last known one
	}
	p.last = result
}

// parseVersion reads an API server's /version answer as Argo CD reports
// a cluster's version: major.minor ("1.36").
func parseVersion(body []byte) (string, error) {
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("reading the cluster's version: %w", err)
	}
	return info.Major + "." + info.Minor, nil
}
