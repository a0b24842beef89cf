package updater

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	listPage = 2 // every test's cycle reads its Applications page by page
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &cluster))
}

// rig is everything an end-to-end image update needs: the local
// cluster's API server, a real registry and Git server, a controller
// deploying from Git, and an updater, all for one control namespace.
type rig struct {
	t       testing.TB
	ctx     context.Context
	c       client.Client
	ns      string
	reg     *registryserver.Registry
	git     *gitserver.Server
	repo    *gitserver.Repo
	u       *Updater
	metrics *Metrics
	changes chan repo.Change
}

// newRig starts a rig; registryCreds is registries.conf's credentials
// for the test registry (may be empty), expire its credsexpire.
func newRig(tb testing.TB, registryCreds, expire string, configure func(*Options)) *rig {
	localcluster.Need(tb)
	r := newBareRig(tb, registryCreds, expire, configure)
	renderer := repo.NewService(repo.Options{Root: tb.TempDir(), RefsTTL: time.Hour, Credentials: &settings.RepoCredentials{Reader: r.c, Namespace: r.ns}})
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Options{
			Config: cluster.Config, Namespace: r.ns, Resync: time.Hour, RepoPoll: time.Hour, RepoChanges: r.changes,
			Renderer: renderer, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		})
	}()
	tb.Cleanup(func() { cancel(); <-done })
	return r
}

// newBareRig is a rig without a controller: nothing is deployed.
func newBareRig(tb testing.TB, registryCreds, expire string, configure func(*Options)) *rig {
	localcluster.Need(tb)
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	if err := kube.InstallCRDs(ctx, cluster.Config); err != nil {
		tb.Fatal(err)
	}
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		tb.Fatal(err)
	}
	r := &rig{t: tb, ctx: ctx, c: c, ns: cluster.NewNamespace(tb), reg: registryserver.Start(tb), git: gitserver.New(tb), changes: make(chan repo.Change, 64)}
	r.repo = r.git.NewRepo(tb, "deploy")
	if err := settings.EnsureDefaultProject(ctx, c, r.ns); err != nil {
		tb.Fatal(err)
	}
	r.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "repo-template", Namespace: r.ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepoCredentials}},
		StringData: map[string]string{"url": r.git.URL, "username": r.git.Username, "password": r.git.Password},
	})
	conf := fmt.Sprintf("registries:\n- name: test registry\n  api_url: http://%s\n  prefix: %s\n  insecure: yes\n  ping: yes\n", r.reg.Host, r.reg.Host)
	if registryCreds != "" {
		conf += "  credentials: " + strings.ReplaceAll(registryCreds, "$NS", r.ns) + "\n"
	}
	if expire != "" {
		conf += "  credsexpire: " + expire + "\n"
	}
	r.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.ConfigMapName, Namespace: r.ns},
		Data: map[string]string{"log.level": "debug", "registries.conf": conf}})

	events, stop, err := NewEventRecorder(cluster.Config)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	r.metrics = NewMetrics(prometheus.NewRegistry())
	opts := Options{
		Client: c, Namespace: r.ns, Git: git.NewWriter(tb.TempDir(), 3), Events: events, Metrics: r.metrics,
		OnCommit: func(url string) {
			select {
			case r.changes <- repo.Change{URL: url}:
			default: // no controller listening, or a refresh is pending
			}
		},
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	if configure != nil {
		configure(&opts)
	}
	r.u = New(opts)
	return r
}

// configure changes the updater's ConfigMap, which each cycle reads.
func (r *rig) configure(change func(data map[string]string)) {
	r.t.Helper()
	cm := &corev1.ConfigMap{}
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: config.ConfigMapName}, cm); err != nil {
		r.t.Fatal(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	change(cm.Data)
	if err := r.c.Update(r.ctx, cm); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) create(obj client.Object) {
	r.t.Helper()
	if err := r.c.Create(r.ctx, obj); err != nil {
		r.t.Fatal(err)
	}
}

// image is a name on the test registry.
func (r *rig) image(repo string) string { return r.reg.Host + "/" + repo }

// app creates an auto-synced Application of the rig's repository at path
// and waits until it deployed the first version. Its name is unique in
// the cluster, as the tracking id names the Application.
func (r *rig) app(name, path string, annotations map[string]string, source func(*v1alpha1.ApplicationSource)) *v1alpha1.Application {
	r.t.Helper()
	dest := cluster.NewNamespace(r.t)
	src := &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: path, TargetRevision: "main"}
	if source != nil {
		source(src)
	}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + dest, Namespace: r.ns, Annotations: annotations},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: src,
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}},
	}
	r.create(app)
	r.eventually(func() (bool, string) {
		if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return false, err.Error()
		}
		return app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(app.Status.Summary.Images) > 0,
			fmt.Sprintf("%s deployed; status %+v", app.Name, app.Status)
	})
	return app
}

// eventually polls until ok, which also says what it waits for.
func (r *rig) eventually(ok func() (bool, string)) {
	r.t.Helper()
	eventually.Within(r.t, eventually.Options{Timeout: 60 * time.Second}, "the updater's test rig", func() string {
		if done, what := ok(); !done {
			return "waiting until " + what
		}
		return ""
	})
}

// runOnce runs a cycle and returns its result.
func (r *rig) runOnce() Result {
	r.t.Helper()
	res, err := r.u.RunOnce(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

// waitDeployed waits until the Deployment in the app's destination runs
// image.
func (r *rig) waitDeployed(app *v1alpha1.Application, deployment, image string) {
	r.t.Helper()
	r.eventually(func() (bool, string) {
		var d appsv1.Deployment
		if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: app.Spec.Destination.Namespace, Name: deployment}, &d); err != nil {
			return false, err.Error()
		}
		got := d.Spec.Template.Spec.Containers[0].Image
		return got == image, fmt.Sprintf("deployment %s runs %s (runs %s)", deployment, image, got)
	})
}

// event waits for an Event on the app with the reason, and returns its
// message.
func (r *rig) event(app *v1alpha1.Application, reason, contains string) string {
	r.t.Helper()
	msg := ""
	r.eventually(func() (bool, string) {
		var list corev1.EventList
		if err := r.c.List(r.ctx, &list, client.InNamespace(r.ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if e.InvolvedObject.Name == app.Name && e.Reason == reason && strings.Contains(e.Message, contains) {
				msg = e.Message
				return true, ""
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return false, fmt.Sprintf("an event %s on %s mentioning %q; events: %q", reason, app.Name, contains, seen)
	})
	return msg
}

// eventCount sums the counts of the app's Events of reason.
func (r *rig) eventCount(app *v1alpha1.Application, reason string) int32 {
	r.t.Helper()
	var list corev1.EventList
	if err := r.c.List(r.ctx, &list, client.InNamespace(r.ns)); err != nil {
		r.t.Fatal(err)
	}
	var n int32
	for _, e := range list.Items {
		if e.InvolvedObject.Name == app.Name && e.Reason == reason {
			n += max(e.Count, 1)
		}
	}
	return n
}

// deploymentYAML is a Deployment running image.
func deploymentYAML(name, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %s}
  template:
    metadata:
      labels: {app: %s}
    spec:
      containers:
      - name: app
        image: %s # set by the image updater
`, name, name, name, image)
}
