package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine/diff"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/kube"
)

// FieldManager owns every field a sync applies; dry runs use it too so
// that predictions match what a sync would do. It is the manager of
// everything Capstan writes to a cluster.
const FieldManager = kube.FieldManager

// DestinationOptions configure Destinations.
type DestinationOptions struct {
	// Tracking is how the live caches find an object's Application.
	// Default tracking.Annotation.
	Tracking tracking.Method
	// OnChange hears the Application key of every tracked object a live
	// cache sees added, changed or deleted. It must not block. Default none.
	OnChange func(app string)
	// IgnoreUpdate, if set, says a live object's update changed nothing
	// that matters, so OnChange is not told. Default none.
	IgnoreUpdate func(old, new *unstructured.Unstructured) bool
	// WrapTransport, if set, wraps the transport of each destination's
	// clients (request metrics, say), given the cluster's server URL.
	WrapTransport func(server string) func(http.RoundTripper) http.RoundTripper
	// RespectRBAC, read at each watch, says what watching a kind the
	// controller may not list does (live.Options.RespectRBAC). Default:
	// such a kind is an error.
	RespectRBAC func() live.RBACMode
	// JQTimeout bounds each jq path expression of an ignore rule in a
	// comparison (diff.Options.JQTimeout). Default 1 s.
	JQTimeout time.Duration
	// EventCounter, if set, gives the live caches the function counting
	// each watch event of a kind of the cluster at server
	// (live.Options.EventCounter). Default: events are not counted.
	EventCounter func(server string, gvk schema.GroupVersionKind) func()
}

// Destinations keeps the clients of each destination cluster, made on
// first use and made afresh when the cluster's credentials change (after
// cluster rotate-auth the old token may be revoked already).
type Destinations struct {
	opts DestinationOptions

	mu    sync.Mutex
	byKey map[string]*Destination
}

// NewDestinations returns an empty set of destinations.
func NewDestinations(opts DestinationOptions) *Destinations {
	if opts.Tracking.IsZero() {
		opts.Tracking = tracking.Annotation
	}
	return &Destinations{opts: opts, byKey: map[string]*Destination{}}
}

// Destination is one cluster's clients: a dynamic client, a discovery
// mapper, a differ and, once asked for, a watch cache.
type Destination struct {
	// Cluster is the cluster as its Secret described it when the clients
	// were made.
	Cluster *cluster.Cluster
	// Created is when the clients were made.
	Created time.Time
	// Client reaches the cluster's API server.
	Client dynamic.Interface
	// Mapper maps kinds to resources, refreshing discovery for new kinds.
	Mapper *kube.DiscoveryMapper
	// Differ compares desired and live objects with FieldManager.
	Differ *diff.Differ

	config      *rest.Config
	credentials string
	opts        DestinationOptions

	mu   sync.Mutex
	live *live.Cache
	kube kubernetes.Interface

	version cluster.VersionProbe
}

// Get returns the destination of a cluster, by server URL and name.
func (d *Destinations) Get(c *cluster.Cluster) (*Destination, error) {
	key := c.Server + "|" + c.Name
	fp := credentialsOf(c)
	d.mu.Lock()
	defer d.mu.Unlock()
	if dst, ok := d.byKey[key]; ok {
		if dst.credentials == fp {
			return dst, nil
		}
		dst.stop()
		delete(d.byKey, key)
	}
	dst, err := newDestination(c, fp, d.opts)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Server, err)
	}
	d.byKey[key] = dst
	return dst, nil
}

// All returns every destination made so far.
func (d *Destinations) All() []*Destination {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*Destination, 0, len(d.byKey))
	for _, dst := range d.byKey {
		out = append(out, dst)
	}
	return out
}

// Stop ends every destination's watches.
func (d *Destinations) Stop() {
	for _, dst := range d.All() {
		dst.stop()
	}
}

func newDestination(c *cluster.Cluster, fp string, opts DestinationOptions) (*Destination, error) {
	cfg := rest.CopyConfig(c.Config)
	if opts.WrapTransport != nil {
		cfg.Wrap(opts.WrapTransport(c.Server))
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := kube.NewDiscoveryMapper(disc)
	return &Destination{
		Cluster: c, Created: time.Now(), Client: client, Mapper: mapper,
		Differ: diff.New(client, mapper, diff.Options{FieldManager: FieldManager, JQTimeout: opts.JQTimeout}),
		config: cfg, credentials: fp, opts: opts,
	}, nil
}

// Live returns the destination's watch cache, made on first use. Nothing
// is watched until a kind is asked for.
func (d *Destination) Live() (*live.Cache, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.live != nil {
		return d.live, nil
	}
	var counter func(schema.GroupVersionKind) func()
	if d.opts.EventCounter != nil {
		server := d.Cluster.Server
		counter = func(gvk schema.GroupVersionKind) func() { return d.opts.EventCounter(server, gvk) }
	}
	c, err := live.New(d.config, live.Options{Tracking: d.opts.Tracking, Namespaces: d.Cluster.Namespaces, OnChange: d.opts.OnChange, IgnoreUpdate: d.opts.IgnoreUpdate, Mapper: d.Mapper,
		RespectRBAC: d.opts.RespectRBAC, EventCounter: counter})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", d.Cluster.Server, err)
	}
	d.live = c
	return c, nil
}

// Kube returns a typed client of the cluster, made on first use, for what
// the dynamic client cannot do (pod logs).
func (d *Destination) Kube() (kubernetes.Interface, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.kube == nil {
		cs, err := kubernetes.NewForConfig(d.config)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", d.Cluster.Server, err)
		}
		d.kube = cs
	}
	return d.kube, nil
}

// Watching returns the watch cache if one was made.
func (d *Destination) Watching() (*live.Cache, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.live, d.live != nil
}

func (d *Destination) stop() {
	if c, ok := d.Watching(); ok {
		c.Stop()
	}
}

// Resource returns the client of a kind, in namespace when it is
// namespaced, and whether it is.
func (d *Destination) Resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, bool, error) {
	return d.ResourceWith(d.Client, gvk, namespace)
}

// ResourceWith is Resource through another client of the cluster (one
// that As returned).
func (d *Destination) ResourceWith(c dynamic.Interface, gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, bool, error) {
	m, err := d.Mapper.Mapping(gvk)
	if err != nil {
		return nil, false, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Resource(m.Resource).Namespace(namespace), true, nil
	}
	return c.Resource(m.Resource), false, nil
}

// As returns a client of the cluster that acts as user (Kubernetes
// impersonation): a sync then may do only what user may.
func (d *Destination) As(user string) (dynamic.Interface, error) {
	cfg := rest.CopyConfig(d.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client of %s as %s: %w", d.Cluster.Server, user, err)
	}
	return c, nil
}

// Read reads a live object from the API server; nil when it does not exist.
func (d *Destination) Read(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	ri, _, err := d.Resource(gvk, namespace)
	if err != nil {
		return nil, err
	}
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ObjectKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}.Ref(), err)
	}
	return obj, nil
}

// Manages says why the destination's cluster Secret keeps Capstan away
// from an object, or nil: a Secret that lists namespaces limits Capstan
// to them, and to no cluster-scoped objects unless it sets
// clusterResources.
func (d *Destination) Manages(obj *unstructured.Unstructured, namespaced bool) error {
	c := d.Cluster
	if len(c.Namespaces) == 0 {
		return nil
	}
	if !namespaced {
		if !c.ClusterResources {
			return fmt.Errorf("cluster level %s %q can not be managed when in namespaced mode", obj.GetKind(), obj.GetName())
		}
		return nil
	}
	if !slices.Contains(c.Namespaces, obj.GetNamespace()) {
		return fmt.Errorf("namespace %q for %s %q is not managed", obj.GetNamespace(), obj.GetKind(), obj.GetName())
	}
	return nil
}

// credentialsOf fingerprints a cluster's credentials and TLS settings,
// and the last request to rebuild its cache (invalidate-cache).
func credentialsOf(c *cluster.Cluster) string {
	cfg := c.Config
	h := sha256.New()
	for _, part := range [][]byte{[]byte(cfg.BearerToken), []byte(cfg.Username), []byte(cfg.Password), cfg.CertData, cfg.KeyData, cfg.CAData,
		[]byte(strconv.FormatBool(cfg.Insecure)), []byte(cfg.BearerTokenFile), []byte(cfg.ServerName), []byte(c.RefreshRequested)} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
