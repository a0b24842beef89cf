package commands

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestImageUpdaterRunThroughTheAPI is Image Updater's documented API setup: the updater
// writes back through Capstan's API (argocd.grpcWeb in
// argocd-image-updater-cm) as the image-updater account, whose role may
// only get and update Applications, with its API key in the
// argocd-image-updater-token Secret. It also runs --dry-run and the
// name and label filters.
func TestImageUpdaterRunThroughTheAPI(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	ctx := context.Background()
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{"accounts.image-updater": "apiKey"}},
		{ObjectMeta: metav1.ObjectMeta{Name: rbac.ConfigMapName, Namespace: f.ns}, Data: map[string]string{
			"policy.default": "role:readonly",
			"policy.csv": "p, role:image-updater, applications, get, */*, allow\n" +
				"p, role:image-updater, applications, update, */*, allow\n" +
				"g, image-updater, role:image-updater\n",
		}},
	} {
		if err := testobj.Put(ctx, f.c, cm); err != nil {
			t.Fatal(err)
		}
	}
	f.login()
	apiKey := strings.TrimSpace(f.expect(0, "account", "generate-token", "--account", "image-updater"))
	if err := f.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-image-updater-token", Namespace: f.ns},
		StringData: map[string]string{"argocd.token": apiKey}}); err != nil {
		t.Fatal(err)
	}

	reg := registryserver.Start(t)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	reg.PushImage(t, "team/shop", day, "1.0.0")
	reg.PushImage(t, "team/shop", day.Add(time.Hour), "1.4.2")
	image := reg.Host + "/team/shop"
	t.Setenv("SHOP_REGISTRY_CREDS", reg.Username+":"+reg.Password)
	updaterCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.LegacyConfigMapName, Namespace: f.ns}, Data: map[string]string{
		"applications_api":   "argocd",
		"argocd.server_addr": f.addr,
		"argocd.insecure":    "true",
		"argocd.grpcWeb":     "true",
		"registries.conf": fmt.Sprintf("registries:\n- name: local\n  prefix: %s\n  api_url: http://%s\n  insecure: yes\n  credentials: env:SHOP_REGISTRY_CREDS\n",
			reg.Host, reg.Host),
	}}
	if err := f.c.Create(ctx, updaterCM); err != nil {
		t.Fatal(err)
	}
	newApp := func(name string, labels map[string]string) *v1alpha1.Application {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels, Annotations: map[string]string{
				config.Prefix + "image-list":   "shop=" + image,
				config.Prefix + "force-update": "true",
			}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/shop.git", Path: "shop", Kustomize: &v1alpha1.ApplicationSourceKustomize{}},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop"}},
		}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		return app
	}
	shop := newApp("shop", map[string]string{"team": "shop"})
	other := newApp("other", map[string]string{"team": "other"})
	images := func(app *v1alpha1.Application) string {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			t.Fatal(err)
		}
		var out []string
		if k := app.Spec.Source.Kustomize; k != nil {
			for _, img := range k.Images {
				out = append(out, string(img))
			}
		}
		return strings.Join(out, ",")
	}
	run := func(args ...string) {
		t.Helper()
		t.Setenv("KUBECONFIG", kubeCluster.KubeconfigPath)
		args = append([]string{"image-updater", "run", "--once", "--argocd-namespace", f.ns, "--git-dir", t.TempDir()}, args...)
		var out, errOut strings.Builder
		if code := Execute(args, &out, &errOut); code != 0 {
			t.Fatalf("capstan %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}

	run("--dry-run")
	if got := images(shop); got != "" {
		t.Fatalf("--dry-run wrote %q", got)
	}
	run("--match-application-name", "sh*", "--match-application-label", "team=shop")
	if got := images(shop); got != image+":1.4.2" {
		t.Errorf("shop's images %q, want %s:1.4.2 through the API over gRPC-Web", got, image)
	}
	if got := images(other); got != "" {
		t.Errorf("the filters let other through: %q", got)
	}

	// Over REST too, and a role that may not update: an error, nothing written.
	updaterCM.Data["argocd.grpcWeb"] = "false"
	if err := f.c.Update(ctx, updaterCM); err != nil {
		t.Fatal(err)
	}
	run()
	if got := images(other); got != image+":1.4.2" {
		t.Errorf("other's images %q over REST", got)
	}
	policy := &corev1.ConfigMap{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: rbac.ConfigMapName}, policy); err != nil {
		t.Fatal(err)
	}
	policy.Data["policy.csv"] = "g, image-updater, role:readonly\n"
	if err := f.c.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reg.PushImage(t, "team/shop", day.Add(2*time.Hour), "1.5.0")
	run()
	if got := images(shop); got != image+":1.4.2" {
		t.Errorf("a read-only account changed shop's images to %q", got)
	}
	eventually.String(t, "an ImageUpdateFailed event on shop naming the refusal", func() string {
		var events corev1.EventList
		if err := f.c.List(ctx, &events, client.InNamespace(f.ns)); err != nil {
			return err.Error()
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == "shop" && e.Reason == "ImageUpdateFailed" && strings.Contains(e.Message, "permission denied") {
				return ""
			}
		}
		return fmt.Sprintf("events %+v", events.Items)
	})
}
