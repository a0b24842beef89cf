package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/engine/diff"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
)

// destination is what the controller keeps per destination cluster.
type destination struct {
	cluster *cluster.Cluster
	// credentials fingerprints the credentials the clients were made with.
	credentials string
	created     time.Time
	cache       *live.Cache
	client      dynamic.Interface
	differ      *diff.Differ
}

// destinations creates one live cache per destination cluster on first use.
type destinations struct {
	tracking         tracking.Method
	controlNamespace string
	events           chan<- event.GenericEvent
	metrics          *metrics.Metrics

	mu    sync.Mutex
	byKey map[string]*destination
}

func (d *destinations) get(c *cluster.Cluster) (*destination, error) {
	key := c.Server + "|" + c.Name
	d.mu.Lock()
	defer d.mu.Unlock()
	fp := credentialsOf(c)
	if dst, ok := d.byKey[key]; ok {
		if dst.credentials == fp {
			return dst, nil
		}
		// New credentials (cluster rotate-auth): the old ones may be
		// revoked already, so start afresh with the new.
		dst.cache.Stop()
		delete(d.byKey, key)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(d.metrics.WrapTransport(c.Server)) // argocd_app_k8s_request_total
	cache, err := live.New(cfg, live.Options{Tracking: d.tracking, Namespaces: c.Namespaces, OnChange: d.notify})
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dst := &destination{cluster: c, credentials: fp, created: time.Now(), cache: cache, client: client, differ: diff.New(client, cache, diff.Options{FieldManager: fieldManager})}
	d.byKey[key] = dst
	return dst, nil
}

// notify turns a change to a tracked object into a reconcile of its
// Application, without blocking the watch.
func (d *destinations) notify(appKey string) {
	ns, name := d.controlNamespace, appKey
	if i := strings.Index(appKey, "_"); i >= 0 {
		ns, name = appKey[:i], appKey[i+1:]
	}
	app := &v1alpha1.Application{}
	app.Namespace, app.Name = ns, name
	select {
	case d.events <- event.GenericEvent{Object: app}:
	default: // the queue is full of work already; the periodic refresh catches up
	}
}

// ClusterObjectCounts reports each destination's live cache, for metrics.
func (d *destinations) ClusterObjectCounts() []metrics.ClusterCount {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]metrics.ClusterCount, 0, len(d.byKey))
	for _, dst := range d.byKey {
		objects, kinds := dst.cache.Stats()
		out = append(out, metrics.ClusterCount{Server: dst.cluster.Server, Objects: objects, APIs: kinds, SyncedAt: dst.created})
	}
	return out
}

func (d *destinations) stop(context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dst := range d.byKey {
		dst.cache.Stop()
	}
}

// credentialsOf fingerprints a cluster's credentials and TLS settings.
func credentialsOf(c *cluster.Cluster) string {
	cfg := c.Config
	h := sha256.New()
	for _, part := range [][]byte{[]byte(cfg.BearerToken), []byte(cfg.Username), []byte(cfg.Password), cfg.CertData, cfg.KeyData, cfg.CAData,
		[]byte(strconv.FormatBool(cfg.Insecure)), []byte(cfg.BearerTokenFile)} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
