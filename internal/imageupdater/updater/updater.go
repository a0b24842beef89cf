// Package updater is the image updater's loop. Each cycle it reads the
// Applications that carry Argo CD Image Updater annotations, lists the
// tags of every distinct image once (shared by all the Applications that
// use it, within each registry's rate limit and a bound on concurrent
// requests), picks each image's next version by its strategy, and writes
// the new versions back to the Application's spec or to Git. Registry
// webhooks start a cycle limited to the pushed images.
package updater

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/creds"
	"github.com/capstan-cd/capstan/internal/imageupdater/registry"
	"github.com/capstan-cd/capstan/internal/imageupdater/tags"
	"github.com/capstan-cd/capstan/internal/imageupdater/webhook"
	"github.com/capstan-cd/capstan/internal/imageupdater/writeback"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
)

// EventRecorder records Events on Applications (client-go's
// record.EventRecorder satisfies it).
type EventRecorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// Options configure an Updater.
type Options struct {
	// Client reads Applications, the updater's ConfigMap and Secrets.
	Client client.Client
	// Namespace holds the Applications, the ConfigMap and the repository
	// Secrets (argocd).
	Namespace string
	// Applications is where write-back method argocd writes. Default:
	// the Kubernetes API through Client.
	Applications Applications
	// ApplicationsFor, if set, picks Applications anew each cycle from
	// the ConfigMap's settings (applications_api and the server's
	// address), so a change applies without a restart.
	ApplicationsFor func(ctx context.Context, st config.Settings) (Applications, error)
	// Git makes Git write-back commits (a *git.Writer). Required for
	// method git.
	Git writeback.Committer
	// Events, if set, records an Event per update and per error
	// (unless the ConfigMap turns kube.events off).
	Events  EventRecorder
	Metrics *Metrics
	// MaxConcurrency bounds the registry requests and Applications
	// processed at once. Default 10.
	MaxConcurrency int
	// DryRun decides and logs but writes nothing.
	DryRun bool
	// MatchNames are globs an Application's name must match (any of
	// them); MatchLabels a selector its labels must match.
	MatchNames  []string
	MatchLabels labels.Selector
	// WatchNamespaces are the namespaces whose ImageUpdaters this updater
	// handles, as Argo CD Image Updater's --watch-namespaces: "*" is
	// every namespace. Default: Namespace only. When none of them holds
	// an ImageUpdater, the Applications of Namespace are read by their
	// annotations alone.
	WatchNamespaces []string
	// OnCommit, if set, is told of each repository the updater pushed
	// to, so a controller in the same process refreshes at once.
	OnCommit func(repoURL string)
	// RegistriesConf, if set, is a registries.conf file that replaces the
	// ConfigMap's.
	RegistriesConf string
	// HTTPClient calls the pull request providers' APIs. Default
	// http.DefaultClient.
	HTTPClient *http.Client
	Log        *slog.Logger
}

// Updater keeps Applications' images current.
type Updater struct {
	opts     Options
	registry *registry.Client
	creds    *creds.Resolver
	regs     atomic.Pointer[[]config.Registry]
	// cycle makes one cycle run at a time.
	cycle sync.Mutex
	// newest is the newest allowed tag last reported for each
	// Application's image, keyed by UID and image name.
	newest sync.Map
}

// New returns an Updater.
func New(opts Options) *Updater {
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = 10
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	if opts.Applications == nil {
		opts.Applications = &KubernetesApplications{Client: opts.Client}
	}
	u := &Updater{opts: opts, creds: &creds.Resolver{Client: opts.Client}}
	u.regs.Store(&[]config.Registry{})
	regs := func() []config.Registry { return *u.regs.Load() }
	ropts := RegistryOptions(regs)
	if opts.Metrics != nil {
		ropts.OnRequest = opts.Metrics.request
	}
	u.registry = registry.New(ropts)
	return u
}

// RegistryOptions are the registry client's options that follow
// registries.conf as regs returns it: plain HTTP, TLS and rate limits per
// registry.
func RegistryOptions(regs func() []config.Registry) registry.Options {
	return registry.Options{
		Insecure: func(host string) bool { return config.Insecure(regs(), host) },
		TLS:      func(host string) *tls.Config { return config.TLS(regs(), host) },
		Limit:    func(host string) float64 { return config.Limit(regs(), host) },
	}
}

// Result sums up a cycle.
type Result struct {
	Applications int
	// Images are the distinct images whose tags were listed.
	Images  int
	Updated int
	Errors  int
}

// Settings reads the updater's ConfigMap (argocd-image-updater-config,
// else argocd-image-updater-cm; defaults when neither exists).
func (u *Updater) Settings(ctx context.Context) (config.Settings, error) {
	for _, name := range []string{config.ConfigMapName, config.LegacyConfigMapName} {
		cm, err := settings.ReadConfigMap(ctx, u.opts.Client, u.opts.Namespace, name)
		if err != nil {
			return config.Settings{}, err
		}
		if cm.ResourceVersion == "" {
			continue // absent
		}
		s, err := config.ParseSettings(cm.Data)
		if err != nil {
			return s, fmt.Errorf("ConfigMap %s/%s: %w", u.opts.Namespace, name, err)
		}
		return u.withRegistriesFile(s)
	}
	s, _ := config.ParseSettings(nil)
	return u.withRegistriesFile(s)
}

func (u *Updater) withRegistriesFile(s config.Settings) (config.Settings, error) {
	if u.opts.RegistriesConf == "" {
		return s, nil
	}
	data, err := os.ReadFile(u.opts.RegistriesConf)
	if err != nil {
		return s, err
	}
	s.Registries, err = config.ParseRegistries(string(data))
	return s, err
}

// watched is an Application the updater manages, with its settings and
// the ImageUpdater they come from (nil: its own annotations).
type watched struct {
	app   *v1alpha1.Application
	conf  *config.App
	owner *owner
}

// tenantScope is where the Secrets an Application's image updater
// settings name (its annotations, or the ImageUpdater of its namespace)
// may be read: the Application's own namespace, and those
// pullsecret.namespaces lists for pull secrets. An Application's author
// can thus never send the install's or another tenant's Secret to a
// registry or repository of their choosing.
func tenantScope(app *v1alpha1.Application, field string, also []string) *settings.SecretScope {
	return &settings.SecretScope{Namespace: app.Namespace, Also: also,
		Field: fmt.Sprintf("%s of Application/%s/%s", field, app.Namespace, app.Name)}
}

// pullSource is the credential source of an image: its own pull-secret
// (a tenant's), else its registry's (the administrator's).
func pullSource(img config.Image, reg config.Registry, app *v1alpha1.Application, st config.Settings) creds.Source {
	if img.PullSecret == "" {
		return creds.Admin(reg.Credentials)
	}
	return creds.Source{Ref: img.PullSecret, Tenant: tenantScope(app, "pull-secret", st.PullSecretNamespaces)}
}

// image is one distinct image of a cycle: its tags are listed once.
type image struct {
	full string
	// addr is full with the registry's prefix replaced by the host of
	// its api_url: where its tags and manifests are read.
	addr        string
	reg         config.Registry
	credentials creds.Source

	once  sync.Once
	tags  []string
	creds registry.Credentials
	err   error
	// digests are the tags the digest strategy follows, read once per
	// cycle (they move, so the cache across cycles is not used).
	digests sync.Map // tag|platforms → *registry.Metadata
}

// RunOnce runs one cycle over every Application; images, if not empty,
// limits it to the Applications using those images (a webhook's).
func (u *Updater) RunOnce(ctx context.Context, images ...string) (Result, error) {
	u.cycle.Lock()
	defer u.cycle.Unlock()
	start := time.Now()
	st, err := u.Settings(ctx)
	if err != nil {
		return Result{}, err
	}
	u.regs.Store(&st.Registries)
	writer := u.opts.Applications
	if u.opts.ApplicationsFor != nil {
		if writer, err = u.opts.ApplicationsFor(ctx, st); err != nil {
			return Result{}, err
		}
	}
	owners, err := u.imageUpdaters(ctx)
	if err != nil {
		return Result{}, err
	}
	var apps []watched
	switch legacy, lerr := u.annotationMode(ctx, owners); {
	case lerr != nil:
		err = lerr
	case legacy:
		apps, err = u.applications(ctx, st)
	default:
		apps, err = u.selected(ctx, st, owners)
	}
	if err != nil {
		return Result{}, err
	}
	only := map[string]bool{}
	for _, img := range images {
		_, full := config.RegistryFor(st.Registries, img)
		only[full] = true
	}

	// One tag list per distinct image (and credentials), shared.
	distinct := map[string]*image{}
	type job struct {
		w      watched
		images []*image
	}
	var jobs []job
	for _, w := range apps {
		j := job{w: w}
		for _, img := range w.conf.Images {
			reg, full := config.RegistryFor(st.Registries, img.Name)
			source := pullSource(img, reg, w.app, st)
			key := full + "|" + source.Ref
			if source.Tenant != nil { // read as that namespace may
				key += "|" + source.Tenant.Namespace
			}
			if distinct[key] == nil {
				distinct[key] = &image{full: full, addr: config.APIAddress(reg, full), reg: reg, credentials: source}
			}
			j.images = append(j.images, distinct[key])
		}
		if len(only) > 0 && !usesAny(j.images, only) {
			continue
		}
		jobs = append(jobs, j)
	}
	var res Result
	var mu sync.Mutex
	sem := make(chan struct{}, u.opts.MaxConcurrency)
	var wg sync.WaitGroup
	listed := map[*image]bool{}
	for _, j := range jobs {
		for _, img := range j.images {
			if listed[img] {
				continue
			}
			listed[img] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				u.list(ctx, img)
			}()
		}
	}
	wg.Wait()
	res.Images = len(listed)
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			written, errs := u.process(ctx, st, writer, j.w, j.images)
			if j.w.owner != nil {
				named := make([]error, len(errs))
				for i, err := range errs {
					named[i] = fmt.Errorf("in Application/%s/%s: %w", j.w.app.Namespace, j.w.app.Name, err)
				}
				j.w.owner.record(named, written)
			}
			mu.Lock()
			res.Updated += len(written)
			res.Errors += len(errs)
			mu.Unlock()
		}()
	}
	wg.Wait()
	u.writeStatus(ctx, st, owners, len(only) > 0)
	res.Applications = len(jobs)
	if m := u.opts.Metrics; m != nil && len(only) == 0 {
		m.ApplicationsWatched.Set(float64(res.Applications))
		m.ImagesWatched.Set(float64(res.Images))
	}
	u.opts.Log.Info("Processing results", "applications", res.Applications, "images_considered", res.Images,
		"images_updated", res.Updated, "errors", res.Errors, "dry_run", u.opts.DryRun, "time_ms", time.Since(start).Milliseconds())
	return res, nil
}

func usesAny(images []*image, only map[string]bool) bool {
	for _, img := range images {
		if only[img.full] {
			return true
		}
	}
	return false
}

// listPage is how many Applications one request of the updater's list
// asks for: with thousands of Applications, only a page of them and the
// ones carrying an image list are held at a time. (The tests page by two.)
var listPage int64 = 500

// applications lists the Applications carrying an image-list that the
// name and label filters let through, recording malformed annotations.
func (u *Updater) applications(ctx context.Context, st config.Settings) ([]watched, error) {
	var out []watched
	err := u.eachApplication(ctx, u.opts.Namespace, func(app *v1alpha1.Application) {
		conf, errs := config.Parse(app.Annotations)
		if conf == nil {
			return
		}
		for _, err := range errs {
			u.fail(st, app, "InvalidAnnotation", err)
		}
		out = append(out, watched{app: app, conf: conf})
	})
	return out, err
}

// eachApplication calls fn with each Application of a namespace that the
// name and label filters let through, a page at a time.
func (u *Updater) eachApplication(ctx context.Context, namespace string, fn func(*v1alpha1.Application)) error {
	opts := []client.ListOption{client.InNamespace(namespace), client.Limit(listPage)}
	if u.opts.MatchLabels != nil {
		opts = append(opts, client.MatchingLabelsSelector{Selector: u.opts.MatchLabels})
	}
	for next := ""; ; {
		var list v1alpha1.ApplicationList
		if err := u.opts.Client.List(ctx, &list, append(opts, client.Continue(next))...); err != nil {
			return fmt.Errorf("listing Applications in %s: %w", namespace, err)
		}
		for i := range list.Items {
			if app := &list.Items[i]; u.nameMatches(app.Name) {
				fn(app)
			}
		}
		if next = list.Continue; next == "" {
			return nil
		}
	}
}

func (u *Updater) nameMatches(name string) bool {
	if len(u.opts.MatchNames) == 0 {
		return true
	}
	for _, glob := range u.opts.MatchNames {
		if ok, _ := path.Match(glob, name); ok {
			return true
		}
	}
	return false
}

// list lists an image's tags, once per cycle.
func (u *Updater) list(ctx context.Context, img *image) {
	img.once.Do(func() {
		host := strings.SplitN(img.addr, "/", 2)[0]
		img.creds, img.err = u.creds.Resolve(ctx, img.credentials, host, img.reg.CredsExpire)
		if img.err != nil {
			return
		}
		img.tags, img.err = u.registry.Tags(ctx, img.addr, img.creds)
		if !img.reg.TimeSorted() {
			sort.Strings(img.tags) // the order means nothing
		}
	})
}

// fail logs an error about an Application, counts it and records an Event.
func (u *Updater) fail(st config.Settings, app *v1alpha1.Application, reason string, err error) {
	u.opts.Log.Error("Image update failed", "application", app.Name, "reason", reason, "error", err.Error())
	if u.opts.Metrics != nil {
		u.opts.Metrics.ImagesErrors.WithLabelValues(app.Name).Inc()
	}
	if u.opts.Events != nil && st.KubeEvents {
		u.opts.Events.Eventf(app, corev1.EventTypeWarning, reason, "%s", err.Error())
	}
}

// process decides an Application's changes and writes them back. It
// returns the changes written and the errors met.
func (u *Updater) process(ctx context.Context, st config.Settings, writer Applications, w watched, images []*image) ([]writeback.Change, []error) {
	app := w.app
	var changes []writeback.Change
	var errs []error
	for i, img := range w.conf.Images {
		c, newest, err := u.decide(ctx, app, img, images[i])
		if err != nil {
			err = fmt.Errorf("image %s: %w", img.Name, err)
			errs = append(errs, err)
			reason := "ImageCheckFailed"
			if errors.Is(err, errVerification) {
				reason = "ImageVerificationFailed"
			}
			u.fail(st, app, reason, err)
			continue
		}
		u.reportNewest(st, app, img, newest)
		if c != nil {
			changes = append(changes, *c)
		}
	}
	if len(changes) == 0 {
		return nil, errs
	}
	for _, c := range changes {
		u.opts.Log.Info("Setting new image", "application", app.Name, "image", c.Name, "old_tag", c.OldTag, "new_tag", c.NewTag, "dry_run", u.opts.DryRun)
	}
	if u.opts.DryRun {
		return nil, errs
	}
	if err := w.conf.WriteBackErr; err != nil {
		// Never write somewhere the annotations did not mean; the
		// annotation's event already says what is wrong.
		u.opts.Log.Warn("Not writing back: the write-back settings are malformed", "application", app.Name, "error", err.Error())
		return nil, errs
	}
	written, err := u.write(ctx, st, writer, w, changes)
	if err != nil {
		u.fail(st, app, "ImageUpdateFailed", err)
		return nil, append(errs, err)
	}
	if !written {
		return nil, errs
	}
	for _, c := range changes {
		if u.opts.Metrics != nil {
			u.opts.Metrics.ImagesUpdated.WithLabelValues(app.Name).Inc()
		}
		if u.opts.Events != nil && st.KubeEvents {
			u.opts.Events.Eventf(app, corev1.EventTypeNormal, "ImagesUpdated", "updated image %s from %q to %q (write-back %s)",
				c.Name, c.OldTag, c.NewTag, w.conf.WriteBack.Method)
		}
	}
	return changes, errs
}

// reportNewest records an Event when an image's newest allowed tag is
// first seen or changes (not on every cycle): what the web UI shows
// beside the tag deployed.
func (u *Updater) reportNewest(st config.Settings, app *v1alpha1.Application, img config.Image, newest string) {
	if newest == "" || u.opts.Events == nil || !st.KubeEvents {
		return
	}
	if prev, seen := u.newest.Swap(string(app.UID)+"|"+img.Name, newest); seen && prev == newest {
		return
	}
	u.opts.Events.Eventf(app, corev1.EventTypeNormal, "NewestTagFound", "newest tag allowed for image %s is %q (%s)", img.Name, newest, img.Strategy)
}

// decide returns the change an image needs, or nil when it is current
// (or not deployed by the Application, unless force-update is set), and
// the newest tag its strategy allows ("" when none; tag@digest for the
// digest strategy).
func (u *Updater) decide(ctx context.Context, app *v1alpha1.Application, img config.Image, listing *image) (*writeback.Change, string, error) {
	if listing.err != nil {
		return nil, "", listing.err
	}
	cur, deployed := currentImage(app, img, listing.full, *u.regs.Load())
	if !deployed && !img.ForceUpdate {
		u.opts.Log.Debug("Image not deployed by the application; skipping", "application", app.Name, "image", img.Name)
		return nil, "", nil
	}
	meta := func(tag string) (*registry.Metadata, error) {
		if img.Strategy != tags.Digest {
			return u.registry.Metadata(ctx, listing.addr, tag, img.Platforms, listing.creds, false)
		}
		key := tag + "|" + strings.Join(img.Platforms, ",")
		if m, ok := listing.digests.Load(key); ok {
			return m.(*registry.Metadata), nil
		}
		m, err := u.registry.Metadata(ctx, listing.addr, tag, img.Platforms, listing.creds, true)
		if err == nil {
			listing.digests.Store(key, m)
		}
		return m, err
	}
	followed := img.Constraint
	if img.Strategy == tags.Digest && followed == "" {
		followed = "latest" // the digest strategy's default tag
	}
	var list []tags.Tag
	pushOrder := img.Strategy == tags.NewestBuild && listing.reg.TimeSorted()
	for i, name := range listing.tags {
		t := tags.Tag{Name: name}
		if pushOrder { // the registry's order stands for the build dates
			t.Created = pushTime(i, len(listing.tags), listing.reg.TagSortMode)
			list = append(list, t)
			continue
		}
		// Build dates and digests cost a request per tag: only the
		// strategies that need them ask, only for tags that pass the
		// filters, and tags already seen come from the cache.
		if (img.Strategy == tags.NewestBuild && img.Filter.Allows(name)) || (img.Strategy == tags.Digest && name == followed) {
			m, err := meta(name)
			if err != nil {
				if fatal(err) {
					return nil, "", err
				}
				// One tag without the wanted platform, or gone, is left
				// out; the others still count.
				u.opts.Log.Debug("Tag left out", "application", app.Name, "image", img.Name, "tag", name, "reason", err.Error())
				continue
			}
			t.Created, t.Digest = m.Created, m.Digest
		}
		list = append(list, t)
	}
	res, err := u.selectTag(list, img, followed, meta)
	if err != nil {
		return nil, "", err
	}
	if res.Tag == nil {
		u.opts.Log.Debug("No tag to update to", "application", app.Name, "image", img.Name, "reason", res.Reason)
		return nil, "", nil
	}
	// The name is written as image-list spells it (nginx, not
	// docker.io/library/nginx), so overrides and manifests match.
	c := &writeback.Change{Image: img, Name: img.Name, OldTag: cur.tag, NewTag: res.Tag.Name}
	newest := res.Tag.Name
	if img.Strategy == tags.Digest {
		newest += "@" + res.Tag.Digest
		if res.Tag.Digest == cur.digest {
			return nil, newest, nil
		}
		c.Digest = res.Tag.Digest
	} else if res.Tag.Name == cur.tag {
		return nil, newest, nil
	}
	if img.Verify != nil {
		digest := c.Digest
		if digest == "" {
			m, err := meta(res.Tag.Name)
			if err != nil {
				return nil, newest, err
			}
			digest = m.Digest
		}
		if err := u.verifySignature(ctx, app, img.Verify, listing, digest); err != nil {
			return nil, newest, fmt.Errorf("%s:%s: %w", img.Name, res.Tag.Name, err)
		}
	}
	return c, newest, nil
}

// pushTime stands for the build date of the i-th of n tags a registry
// lists in push order: later pushes get later times.
func pushTime(i, n int, mode string) time.Time {
	if mode == config.TagSortLatestFirst {
		i = n - 1 - i
	}
	return time.Unix(int64(i), 0)
}

// fatal tells errors that concern the whole image (credentials refused,
// the registry unreachable) from those of one tag (an index without the
// wanted platform, a tag deleted since it was listed).
func fatal(err error) bool {
	return !errors.Is(err, registry.ErrNoPlatform) && !errors.Is(err, registry.ErrNotFound)
}

// selectTag picks the image's next tag. With platforms, a pick that does
// not offer them is left out and the next best is taken.
func (u *Updater) selectTag(list []tags.Tag, img config.Image, followed string, meta func(string) (*registry.Metadata, error)) (*tags.Result, error) {
	for {
		res, err := tags.Select(list, tags.Options{Strategy: img.Strategy, Constraint: followed, Filter: img.Filter})
		if err != nil || res.Tag == nil || len(img.Platforms) == 0 || img.Strategy == tags.NewestBuild || img.Strategy == tags.Digest {
			return res, err // newest-build and digest read the platforms already
		}
		_, err = meta(res.Tag.Name)
		if err == nil {
			return res, nil
		}
		if fatal(err) {
			return nil, err
		}
		list = slices.DeleteFunc(list, func(t tags.Tag) bool { return t.Name == res.Tag.Name })
	}
}

// deployedImage is the version of an image an Application runs now.
type deployedImage struct{ tag, digest string }

// currentImage finds the version of an image the Application deploys:
// its own override (Kustomize images, Helm parameters, plugin variables)
// when it has one,
// else what the controller saw deployed (status.summary.images), matched
// by the full name including the registry.
func currentImage(app *v1alpha1.Application, img config.Image, full string, regs []config.Registry) (deployedImage, bool) {
	same := func(name string) bool {
		_, f := config.RegistryFor(regs, name)
		return f == full
	}
	var found deployedImage
	ok := false
	for _, ref := range app.Status.Summary.Images {
		name, tag, digest := writeback.SplitRef(ref)
		if same(name) {
			found, ok = deployedImage{tag, digest}, true
			break
		}
	}
	if src, _ := writeback.SourceOf(app, config.WriteBack{}, img); src != nil {
		if src.Kustomize != nil {
			for _, entry := range src.Kustomize.Images {
				_, ref, hasOld := strings.Cut(string(entry), "=")
				if !hasOld {
					ref = string(entry)
				}
				if name, tag, digest := writeback.SplitRef(ref); same(name) {
					found, ok = deployedImage{tag, digest}, true
				}
			}
		}
		if src.Helm != nil {
			param, spec := writeback.HelmTagParameter(img)
			for _, p := range src.Helm.Parameters {
				if p.Name != param {
					continue
				}
				if spec {
					_, tag, digest := writeback.SplitRef(p.Value)
					found = deployedImage{tag, digest}
				} else {
					tag, digest, _ := strings.Cut(p.Value, "@")
					found = deployedImage{tag, digest}
				}
				ok = true
			}
		}
		if src.Plugin != nil && img.HasPluginTarget() {
			if d, has := pluginImage(src.Plugin.Env, img); has {
				found, ok = d, true
			}
		}
	}
	return found, ok
}

// pluginImage is the version an Application's plugin variables deploy:
// the spec variable's name:tag, else the tag variable's value.
func pluginImage(env v1alpha1.Env, img config.Image) (deployedImage, bool) {
	value := func(name string) (string, bool) {
		for _, e := range env {
			if e != nil && name != "" && e.Name == name {
				return e.Value, true
			}
		}
		return "", false
	}
	if img.PluginSpec != "" {
		v, ok := value(img.PluginSpec)
		_, tag, digest := writeback.SplitRef(v)
		return deployedImage{tag, digest}, ok
	}
	v, ok := value(img.PluginTag)
	tag, digest, _ := strings.Cut(v, "@")
	return deployedImage{tag, digest}, ok
}

// write records an Application's changes by its write-back method
// (argocd through writer) and reports whether anything changed. A Git
// write-back of a multi-source Application commits each source's images
// to that source.
func (u *Updater) write(ctx context.Context, st config.Settings, writer Applications, w watched, changes []writeback.Change) (bool, error) {
	app, wb := w.app, w.conf.WriteBack
	if wb.Method != config.WriteBackGit {
		return writer.SetImages(ctx, client.ObjectKeyFromObject(app), changes)
	}
	if u.opts.Git == nil {
		return false, errors.New("git write-back is not available in this updater")
	}
	groups := writeback.BySource(app, wb, changes)
	if len(groups) == 1 || wb.PullRequest != nil { // one request holds them all
		return u.commit(ctx, st, app, wb, changes)
	}
	written := false
	for _, g := range groups {
		if g.Source == nil {
			return written, errors.New("git write-back needs an Application with a source")
		}
		ok, err := u.commit(ctx, st, writeback.Only(app, g.Source, g.Type), wb, g.Changes)
		if err != nil {
			return written, err
		}
		written = written || ok
	}
	return written, nil
}

// commit makes one Git write-back of changes to app's (main) source.
func (u *Updater) commit(ctx context.Context, st config.Settings, app *v1alpha1.Application, wb config.WriteBack, changes []writeback.Change) (bool, error) {
	repoURL, err := writeback.Repository(app, wb)
	if err != nil {
		return false, err
	}
	if err := u.checkRepository(ctx, app, repoURL); err != nil {
		return false, err
	}
	creds, err := u.gitCredentials(ctx, app, wb, repoURL)
	if err != nil {
		return false, err
	}
	gc := writeback.GitCommit{App: app, WriteBack: wb, Changes: changes, Creds: creds,
		AuthorName: st.GitUser, AuthorEmail: st.GitEmail, MessageTemplate: st.CommitMessageTemplate, Signing: st.CommitSigning, SignOff: st.CommitSignOff}
	if wb.PullRequest != nil {
		return u.writePullRequest(ctx, st, app, gc, repoURL)
	}
	sha, err := writeback.Commit(ctx, u.opts.Git, gc)
	if err != nil {
		return false, err
	}
	if sha == "" {
		u.opts.Log.Info("Nothing to commit; Git already has these images", "application", app.Name, "repository", git.RedactURL(repoURL))
		return false, nil
	}
	u.opts.Log.Info("Committed image update", "application", app.Name, "repository", git.RedactURL(repoURL), "commit", sha)
	if u.opts.OnCommit != nil {
		u.opts.OnCommit(repoURL)
	}
	return true, nil
}

// gitCredentials are a Git write-back's credentials: the Secret
// git:secret:ns/name names (username and password, or sshPrivateKey), read
// as the Application's tenant scope allows and only for a repository its
// url (if it has one) covers; or the repository's credentials from the
// repository Secrets, as the Application's project reaches it.
func (u *Updater) gitCredentials(ctx context.Context, app *v1alpha1.Application, wb config.WriteBack, repoURL string) (git.Creds, error) {
	if wb.Secret == "" {
		return (&settings.RepoCredentials{Reader: u.opts.Client, Namespace: u.opts.Namespace}).ForRepo(ctx, repoURL, app.Spec.Project)
	}
	ns, name, _ := strings.Cut(wb.Secret, "/")
	s, err := tenantScope(app, "write-back-method git:secret", nil).Read(ctx, u.opts.Client, ns, name)
	if err != nil {
		return git.Creds{}, fmt.Errorf("git write-back credentials: %w", err)
	}
	if url := string(s.Data["url"]); url != "" && !settings.URLCovers(url, repoURL) {
		return git.Creds{}, fmt.Errorf("git write-back credentials: %w: Secret/%s/%s is for %s, not %s",
			settings.ErrSecretRefused, s.Namespace, s.Name, git.RedactURL(url), git.RedactURL(repoURL))
	}
	return git.Creds{Username: string(s.Data["username"]), Password: string(s.Data["password"]), SSHPrivateKey: string(s.Data["sshPrivateKey"])}, nil
}

// ErrRepositoryNotPermitted refuses a write-back to a repository the
// Application's project does not list in sourceRepos.
var ErrRepositoryNotPermitted = errors.New("repository not permitted in project")

// checkRepository refuses a write-back repository (git-repository, or the
// source's) that the Application's project does not permit: credentials
// the project reaches, unscoped templates among them, never push into
// another team's repository.
func (u *Updater) checkRepository(ctx context.Context, app *v1alpha1.Application, repoURL string) error {
	proj, err := project.Load(ctx, u.opts.Client, u.opts.Namespace, app.Spec.Project)
	if err != nil {
		return fmt.Errorf("git write-back to %s: %w", git.RedactURL(repoURL), err)
	}
	if !project.SourcePermitted(proj, repoURL) {
		return fmt.Errorf("git write-back: %w: %s is not in the sourceRepos of project %s", ErrRepositoryNotPermitted, git.RedactURL(repoURL), app.Spec.Project)
	}
	return nil
}

// Run runs a cycle every interval, and a cycle limited to the pushed
// images for each batch of webhook pushes, until ctx ends.
func (u *Updater) Run(ctx context.Context, interval time.Duration, pushes <-chan []webhook.Push) error {
	if interval <= 0 { // as Argo CD Image Updater: one cycle
		_, err := u.RunOnce(ctx)
		return err
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	run := func(images ...string) {
		if _, err := u.RunOnce(ctx, images...); err != nil && ctx.Err() == nil {
			u.opts.Log.Error("Image update cycle failed", "error", err.Error())
		}
	}
	run()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			run()
		case batch := <-pushes:
			seen := map[string]bool{}
			var images []string
			for _, p := range batch {
				if !seen[p.Image] {
					seen[p.Image] = true
					images = append(images, p.Image)
				}
			}
			sort.Strings(images)
			run(images...)
		}
	}
}
