package notifications

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Options configure the notifications controller. Fields without a
// default are required.
type Options struct {
	// Config reaches the control cluster.
	Config *rest.Config
	// Namespace is the control namespace: Applications, AppProjects and
	// the settings. Default "argocd".
	Namespace string
	// ApplicationNamespaces are other namespaces (globs) whose
	// Applications are notified about (--application-namespaces).
	// Default none.
	ApplicationNamespaces []string
	// ConfigMapName and SecretName name the settings objects. Default
	// argocd-notifications-cm and argocd-notifications-secret.
	ConfigMapName, SecretName string
	// AppLabelSelector limits the Applications notified about
	// (--app-label-selector). Default all.
	AppLabelSelector string
	// Commits reads commit metadata for templates' repo.GetCommitMetadata:
	// a repo server. Default none (that function then fails).
	Commits RepoReader
	// Processors handle Applications in parallel (--processors-count).
	// Default 1.
	Processors int
	// Resync looks at every Application again this often, so a delivery
	// that failed is tried again. Default 60s, as in Argo CD.
	Resync time.Duration
	// Metrics counts evaluations and deliveries. Default: none.
	Metrics *Metrics
	// Log receives the controller's lines. Default slog's default logger.
	Log *slog.Logger
	// SelfService also reads ConfigMapName and SecretName in each
	// Application's own namespace (notificationscontroller.selfservice.enabled):
	// their services, templates and triggers notify about that namespace's
	// Applications only, besides the control namespace's settings. Default
	// false.
	SelfService bool
	// Cache, if set, is the process's shared cache of the control cluster
	// (capstan run), read instead of a cache of the controller's own; it
	// must hold the Applications of ApplicationNamespaces. Default: the
	// controller's own.
	Cache *kube.SharedCache
}

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = "argocd"
	}
	if o.ConfigMapName == "" {
		o.ConfigMapName = settings.NotificationsConfigMap
	}
	if o.SecretName == "" {
		o.SecretName = settings.NotificationsSecret
	}
	if o.Processors <= 0 {
		o.Processors = 1
	}
	if o.Resync <= 0 {
		o.Resync = time.Minute
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
}

// Run notifies about Applications until ctx ends, waiting for the API
// server and the Application CRD rather than failing.
func Run(ctx context.Context, opts Options) error {
	opts.defaults()
	selector, err := labels.Parse(opts.AppLabelSelector)
	if err != nil {
		return fmt.Errorf("invalid app label selector %q: %w", opts.AppLabelSelector, err)
	}
	ctrl.SetLogger(logr.FromSlogHandler(opts.Log.Handler()))
	routeEngineLog(opts.Log)
	return kube.Keep(ctx, opts.Log, "the notifications controller", func(ctx context.Context) error {
		return run(ctx, opts, selector)
	})
}

func run(ctx context.Context, opts Options, selector labels.Selector) error {
	scheme, err := kube.NewScheme()
	if err != nil {
		return err
	}
	// Applications are held typed, as the other components of capstan run
	// hold them (decoding each change as a plain object costs several times
	// more, and so does holding it); an Application becomes the plain
	// object its templates see only when it has subscriptions.
	apps := &v1alpha1.Application{}
	cacheOpts := ctrlcache.Options{
		DefaultNamespaces: map[string]ctrlcache.Config{opts.Namespace: {}},
		DefaultTransform:  ctrlcache.TransformStripManagedFields(),
		// Of the ConfigMaps and Secrets, only the settings are held.
		ByObject: map[client.Object]ctrlcache.ByObject{
			&corev1.ConfigMap{}: {Field: fields.OneTermEqualSelector("metadata.name", opts.ConfigMapName)},
			&corev1.Secret{}:    {Field: fields.OneTermEqualSelector("metadata.name", opts.SecretName)},
		},
	}
	if len(opts.ApplicationNamespaces) > 0 {
		cacheOpts.ByObject[apps] = ctrlcache.ByObject{Namespaces: map[string]ctrlcache.Config{ctrlcache.AllNamespaces: {}}}
		if opts.SelfService { // the settings of every namespace, by name
			for obj, by := range cacheOpts.ByObject {
				if obj != apps {
					by.Namespaces = map[string]ctrlcache.Config{ctrlcache.AllNamespaces: {}}
					cacheOpts.ByObject[obj] = by
				}
			}
		}
	}
	var newCache ctrlcache.NewCacheFunc
	if opts.Cache != nil {
		newCache = opts.Cache.NewCache
	}
	mgr, err := ctrl.NewManager(opts.Config, ctrl.Options{
		Scheme:         scheme,
		MapperProvider: kube.NewManagerMapper,
		Cache:          cacheOpts,
		NewCache:       newCache,
		Metrics:        metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return err
	}
	r := &reconciler{client: mgr.GetClient(), settingsReader: mgr.GetClient(), opts: opts, selector: selector,
		recorder: mgr.GetEventRecorder("argocd-notifications-controller")}
	if opts.Cache != nil {
		// The shared cache holds the control namespace's settings only.
		r.settingsReader = mgr.GetAPIReader()
	}
	inScope := predicate.NewPredicateFuncs(func(o client.Object) bool { return r.allowed(o.GetNamespace()) })
	err = ctrl.NewControllerManagedBy(mgr).
		For(apps, builder.WithPredicates(inScope)).
		Named("notifications").
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: opts.Processors, SkipNameValidation: new(true)}).
		Complete(r)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// reconciler notifies about one Application at a time.
type reconciler struct {
	client client.Client
	// recorder records failed deliveries as Events on the Application.
	recorder events.EventRecorder
	// settingsReader reads the self-service settings of other namespaces.
	settingsReader client.Reader
	opts           Options
	selector       labels.Selector

	mu sync.Mutex
	// processors are the Processors of the settings, by namespace ("" for
	// the control namespace's), with the settings' version.
	processors map[string]versioned
	// pending holds the state of Applications whose notified annotation
	// could not be written, so what was sent is not sent again while the
	// write is retried.
	pending map[types.UID]State
	// unmark holds, by Application, the state keys of late deliveries
	// that failed: forgotten at its next look.
	unmark map[types.UID][]string
}

// stateOf is what app was told: its annotation, or the state not yet
// written.
func (r *reconciler) stateOf(app client.Object) (State, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.pending[app.GetUID()]
	if !ok {
		s = ParseState(app.GetAnnotations()[AnnotationNotified])
	}
	forgotten := r.unmark[app.GetUID()]
	for _, key := range forgotten {
		delete(s, key)
	}
	return s, forgotten
}

// forgot drops the late failures of app that a written state no longer
// holds.
func (r *reconciler) forgot(app client.Object, keys []string) {
	if len(keys) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rest := slices.DeleteFunc(r.unmark[app.GetUID()], func(k string) bool { return slices.Contains(keys, k) })
	if len(rest) == 0 {
		delete(r.unmark, app.GetUID())
	} else {
		r.unmark[app.GetUID()] = rest
	}
}

// setPending records (or, with nil, clears) app's unwritten state.
func (r *reconciler) setPending(app client.Object, s State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s == nil {
		delete(r.pending, app.GetUID())
		return
	}
	if r.pending == nil {
		r.pending = map[types.UID]State{}
	}
	r.pending[app.GetUID()] = s
}

func (r *reconciler) allowed(ns string) bool {
	return ns == r.opts.Namespace || project.MatchesAny(r.opts.ApplicationNamespaces, ns, false)
}

// versioned is a Processor and the version of the settings it was made of.
type versioned struct {
	version   string
	processor *Processor
}

// processorFor returns the Processor of the control namespace's settings
// as they are now, made anew when they changed, so edits apply without a
// restart.
func (r *reconciler) processorFor(ctx context.Context) (*Processor, error) {
	return r.processorOf(ctx, r.client, r.opts.Namespace, "")
}

// processorsOf are the Processors an Application is notified through: the
// control namespace's and, with self-service notifications, those of its
// own namespace's settings when it has them.
func (r *reconciler) processorsOf(ctx context.Context, app client.Object) ([]*Processor, error) {
	p, err := r.processorFor(ctx)
	if err != nil {
		return nil, err
	}
	out := []*Processor{p}
	if ns := app.GetNamespace(); r.opts.SelfService && ns != r.opts.Namespace {
		own, err := r.processorOf(ctx, r.settingsReader, ns, ns)
		if err != nil {
			return out, err
		}
		if own != nil {
			out = append(out, own)
		}
	}
	return out, nil
}

// processorOf is the Processor of the settings in namespace (scope: its
// name for self-service settings, "" for the control namespace's); nil
// when a self-service namespace has no settings ConfigMap.
func (r *reconciler) processorOf(ctx context.Context, reader client.Reader, namespace, scope string) (*Processor, error) {
	s, err := settings.LoadNotifications(ctx, reader, namespace, r.opts.ConfigMapName, r.opts.SecretName)
	if err != nil {
		return nil, err
	}
	if scope != "" && strings.HasPrefix(s.Version, "/") {
		return nil, nil // no ConfigMap there
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.processors[scope]; ok && v.version == s.Version {
		return v.processor, nil
	}
	cfg, err := Parse(s)
	if err != nil {
		// The rest of the settings still works; said once per version.
		r.opts.Log.Error("invalid notifications settings", "configmap", namespace+"/"+r.opts.ConfigMapName, "error", err.Error())
	}
	cfg.Tenant = scope != ""
	p := NewProcessor(cfg, r.opts.Commits, r.opts.Metrics)
	p.namespace = scope
	if r.processors == nil {
		r.processors = map[string]versioned{}
	}
	r.processors[scope] = versioned{version: s.Version, processor: p}
	return p, nil
}

// Reconcile notifies about one Application, and looks at it again after
// Resync, as Argo CD's informer resync does: time-based triggers and failed
// deliveries are evaluated again, and settings edits reach every
// Application.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	app := &v1alpha1.Application{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !r.selector.Matches(labels.Set(app.GetLabels())) {
		return reconcile.Result{}, nil // a label change brings it back
	}
	if err := r.notify(ctx, app); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: r.opts.Resync}, nil
}

// notify sends what app's subscriptions trigger and records it.
func (r *reconciler) notify(ctx context.Context, app *v1alpha1.Application) error {
	name := fmt.Sprintf("Application/%s/%s", app.GetNamespace(), app.GetName())
	processors, err := r.processorsOf(ctx, app)
	if len(processors) == 0 {
		return err
	}
	if err != nil {
		r.opts.Log.Warn("notifications: "+err.Error(), "resource", name)
	}
	var obj map[string]any
	state, forgotten := r.stateOf(app)
	changed := len(forgotten) > 0
	for _, p := range processors {
		subs := p.cfg.SubscriptionsOf(app.GetLabels(), app.GetAnnotations(), r.projectAnnotations(ctx, app))
		if len(subs) == 0 {
			continue
		}
		if obj == nil {
			if obj, err = plainApplication(app); err != nil {
				return err
			}
			if !SyncStatusRefreshed(obj) {
				return nil
			}
		}
		changed = r.process(ctx, p, app, obj, subs, state) || changed
	}
	if changed || (obj != nil && r.hasPending(app)) {
		if err := r.persist(ctx, app, state); err != nil {
			r.setPending(app, state)
			return fmt.Errorf("%s: writing %s: %w", name, AnnotationNotified, err)
		}
		r.setPending(app, nil)
		r.forgot(app, forgotten)
	}
	return nil
}

func (r *reconciler) hasPending(app client.Object) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.pending[app.GetUID()]
	return ok
}

// plainApplication is app as its templates see it: the plain object the
// API server serves.
func plainApplication(app *v1alpha1.Application) (map[string]any, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
	if err != nil {
		return nil, fmt.Errorf("converting Application/%s/%s: %w", app.Namespace, app.Name, err)
	}
	obj["apiVersion"], obj["kind"] = v1alpha1.GroupVersion.String(), "Application"
	return obj, nil
}

// projectAnnotations are the annotations of app's AppProject, which
// subscribe all its Applications; none when it cannot be read.
func (r *reconciler) projectAnnotations(ctx context.Context, app *v1alpha1.Application) map[string]string {
	if app.Spec.Project == "" {
		return nil
	}
	proj := &v1alpha1.AppProject{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: app.Spec.Project}, proj); err != nil {
		return nil
	}
	return proj.GetAnnotations()
}

// process runs one Processor for app (obj, its plain form): what it is
// about to send is stored first, so a restart never sends it twice; each
// failed delivery is logged and recorded as a Warning Event on app, its
// error's URLs cut to their host. It tells whether state changed.
func (r *reconciler) process(ctx context.Context, p *Processor, app *v1alpha1.Application, obj map[string]any, subs Subscriptions, state State) bool {
	name := fmt.Sprintf("Application/%s/%s", app.GetNamespace(), app.GetName())
	settingsOf := r.opts.Namespace
	if p.namespace != "" {
		settingsOf = p.namespace
	}
	deliveries, changed, err := p.ProcessWith(ctx, obj, subs, state, func() error { return r.persist(ctx, app, state) },
		func(d Delivery, key string) { r.late(app, settingsOf, d, key) })
	if err != nil {
		r.opts.Log.Warn("notifications: "+redacted(err), "resource", name, "settings", settingsOf)
	}
	for _, d := range deliveries {
		r.report(app, settingsOf, d)
	}
	return changed
}

// report logs one delivery and records a failed one as a Warning Event
// on app, its error's URLs cut to their host.
func (r *reconciler) report(app *v1alpha1.Application, settingsOf string, d Delivery) {
	name := fmt.Sprintf("Application/%s/%s", app.GetNamespace(), app.GetName())
	if d.Err == nil {
		r.opts.Log.Info("Notification sent", "resource", name, "trigger", d.Trigger, "service", d.Destination.Service,
			"recipient", d.Destination.Recipient, "settings", settingsOf)
		return
	}
	msg := redacted(d.Err)
	r.opts.Log.Error("Failed to notify recipient", "resource", name, "trigger", d.Trigger, "service", d.Destination.Service,
		"recipient", d.Destination.Recipient, "settings", settingsOf, "error", msg)
	if r.recorder != nil {
		r.recorder.Eventf(app, nil, corev1.EventTypeWarning, "NotificationFailed", "Notify", "failed to notify %s:%s of %s (tried again after a backoff): %s",
			d.Destination.Service, d.Destination.Recipient, d.Trigger, msg)
	}
}

// late takes a delivery that ended after its pass: reported, and when it
// failed, its state key is forgotten at app's next look (so it is tried
// again once its service's backoff has passed).
func (r *reconciler) late(app *v1alpha1.Application, settingsOf string, d Delivery, key string) {
	r.report(app, settingsOf, d)
	if d.Err == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unmark == nil {
		r.unmark = map[types.UID][]string{}
	}
	r.unmark[app.GetUID()] = append(r.unmark[app.GetUID()], key)
}

// persist writes state into app's notified annotation with a merge patch
// of that annotation alone, removing it when state is empty.
func (r *reconciler) persist(ctx context.Context, app *v1alpha1.Application, state State) error {
	state.truncate()
	var value any
	written := ""
	if len(state) > 0 {
		written = state.String()
		value = written
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationNotified: value}}})
	if err != nil {
		return err
	}
	err = r.client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	r.awaitCache(ctx, app, written)
	return nil
}

// awaitCache waits (a few seconds at most) until the cache holds app with
// the notified state just written: the next look at app, which other
// writers' changes bring at any time, must find it, or it would send
// again what was sent.
func (r *reconciler) awaitCache(ctx context.Context, app *v1alpha1.Application, written string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cached := &v1alpha1.Application{}
	for {
		err := r.client.Get(ctx, client.ObjectKeyFromObject(app), cached)
		if err != nil || cached.GetAnnotations()[AnnotationNotified] == written {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
