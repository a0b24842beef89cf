package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/faultproxy"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// TestRegistryGoneMidFetch runs Capstan's image updater against a registry
// behind a proxy that is cut while new tags are looked up, and stays away
// a while. Nothing is written meanwhile; once the registry is back, each
// new version reaches the Application and its Deployment.
func TestRegistryGoneMidFetch(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	reg := registryserver.Start(t)
	proxy := faultproxy.New(t, reg.Host)
	image := proxy.Addr + "/team/app"
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reg.PushImage(t, "team/app", day, "1.0.0")

	if err := kube.InstallCRDs(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	ns := cluster.NewNamespace(t)
	kc := newKubeClient(t)
	if err := kc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry", Namespace: ns},
		StringData: map[string]string{"creds": reg.Username + ":" + reg.Password}}); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("registries:\n- name: test\n  api_url: http://%s\n  prefix: %s\n  insecure: yes\n  credentials: secret:%s/registry#creds\n", proxy.Addr, proxy.Addr, ns)
	if err := kc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-image-updater-config", Namespace: ns},
		Data: map[string]string{"registries.conf": conf}}); err != nil {
		t.Fatal(err)
	}
	repo := gitserver.NewLocalRepo(t)
	repo.Commit(t, "app", map[string]string{
		"app/kustomization.yaml": "resources: [deploy.yaml]\n",
		"app/deploy.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: app, image: %s:1.0.0}]
`, image),
	})
	dest := cluster.NewNamespace(t)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns, Annotations: map[string]string{
			"argocd-image-updater.argoproj.io/image-list":          "app=" + image,
			"argocd-image-updater.argoproj.io/app.update-strategy": "semver",
		}},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}},
	}
	if err := kc.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	c := newCapstan(t, ns, "--image-updater=true", "--image-updater-interval", "1s", "--image-updater-metrics-port", "0", "--image-updater-webhook-port", "0")
	c.start()

	deployed := func(version string) func() error {
		return func() error {
			d := &appsv1.Deployment{}
			if err := kc.Get(ctx, clientKey(dest, "app"), d); err != nil {
				return err
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != image+":"+version {
				a := &v1alpha1.Application{}
				_ = kc.Get(ctx, clientKey(ns, "app"), a)
				return fmt.Errorf("the Deployment runs %s, want %s (app images %v, source %+v)", got, version, a.Status.Summary.Images, a.Spec.Source.Kustomize)
			}
			return nil
		}
	}
	waitFor(t, "1.0.0 deployed", deployed("1.0.0"))
	rng := newRand(t)
	for i := 1; i <= *iterations; i++ {
		version := fmt.Sprintf("1.0.%d", i)
		reg.PushImage(t, "team/app", day.Add(time.Duration(i)*time.Hour), version)
		time.Sleep(time.Duration(rng.Int64N(int64(1500 * time.Millisecond)))) // the cut comes at a random point of a cycle
		proxy.Down()
		// A cycle that read the tags just before the cut may still be
		// writing what it found: the spec is taken once that write is in.
		time.Sleep(time.Second) // a write that may or may not come: nothing to wait on
		before := images(t, kc, ns)
		time.Sleep(outageLength) // the outage itself
		if got := images(t, kc, ns); got != before {
			t.Errorf("iteration %d: the spec changed while the registry was away: %q → %q", i, before, got)
		}
		proxy.Up()
		back := time.Now()
		waitFor(t, version+" deployed", deployed(version))
		t.Logf("iteration %d: %s deployed %s after the registry came back", i, version, time.Since(back).Round(time.Millisecond))
	}
	if !c.alive() {
		t.Fatal("capstan exited")
	}
}

// images is the app's Kustomize image overrides, as the updater writes them.
func images(t *testing.T, kc client.Client, ns string) string {
	t.Helper()
	app := &v1alpha1.Application{}
	if err := kc.Get(context.Background(), clientKey(ns, "app"), app); err != nil {
		t.Fatal(err)
	}
	if app.Spec.Source.Kustomize == nil {
		return ""
	}
	var out []string
	for _, img := range app.Spec.Source.Kustomize.Images {
		out = append(out, string(img))
	}
	return strings.Join(out, ",")
}
