package updater

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	iuv1 "github.com/capstan-cd/capstan/api/imageupdater/v1alpha1"
	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// sample reads one of Argo CD Image Updater's sample files (every field
// must be one Capstan's types know) and creates its ImageUpdaters in the
// rig's namespace: the one change made to them, as `kubectl apply -n`
// would if they named none.
func (r *rig) sample(file string) {
	r.t.Helper()
	dir := toolbin.Find(r.t, "CAPSTAN_IMAGE_UPDATER_MANIFESTS", "bin/image-updater-manifests", "image-updater-manifests")
	data, err := os.ReadFile(filepath.Join(dir, "samples", "argocd-image-updater_v1alpha1_imageupdater"+file+".yaml"))
	if err != nil {
		r.t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var iu iuv1.ImageUpdater
		if err := yaml.UnmarshalStrict([]byte(doc), &iu); err != nil {
			r.t.Fatalf("sample %s: %v", file, err)
		}
		iu.Namespace = r.ns
		r.create(&iu)
	}
}

// samplesRegistries makes the rig's registry the default one (so nginx is
// its library/nginx) and a mirror of ghcr.io, as registries.conf lets a
// site do.
func (r *rig) samplesRegistries() {
	r.configure(func(data map[string]string) {
		data["registries.conf"] = fmt.Sprintf(`registries:
- name: local
  api_url: http://%[1]s
  prefix: %[1]s
  insecure: yes
  default: true
  defaultns: library
  credentials: pullsecret:%[2]s/pull
- name: ghcr.io mirror
  api_url: http://%[1]s
  prefix: ghcr.io
  insecure: yes
  credentials: pullsecret:%[2]s/pull
`, r.reg.Host, r.ns)
	})
}

// kustomizeApp creates an Application of a Kustomize source overriding
// images (its deployed versions), with labels and annotations.
func (r *rig) kustomizeApp(name string, labels, annotations map[string]string, images ...string) *v1alpha1.Application {
	r.t.Helper()
	var list v1alpha1.KustomizeImages
	for _, img := range images {
		list = append(list, v1alpha1.KustomizeImage(img))
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns, Labels: labels, Annotations: annotations},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "app", TargetRevision: "main",
			Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: list}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name}}}
	r.create(app)
	return app
}

// spec reads an Application's spec anew.
func (r *rig) spec(name string) v1alpha1.ApplicationSpec {
	r.t.Helper()
	var app v1alpha1.Application
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: name}, &app); err != nil {
		r.t.Fatal(err)
	}
	return app.Spec
}

// Image Updater v1.3.0's sample ImageUpdaters, applied unchanged but for
// their namespace, do what its documentation says: the short ones update
// app-001 by the ImageUpdater and a labelled Application by its
// annotations, the plugin one sets the plugin's variables, the
// verification one writes the signed image and the image that opts out.
func TestImageUpdaterSamples(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	r.samplesRegistries()
	r.reg.PushImage(t, "library/nginx", t0, "1.17.9")
	r.reg.PushImage(t, "library/nginx", t0.Add(time.Hour), "1.17.10")
	r.reg.PushImage(t, "library/nginx", t0.Add(2*time.Hour), "1.17.11")
	r.reg.PushImage(t, "team/web", t0, "1.0.0")
	r.reg.PushImage(t, "team/web", t0.Add(time.Hour), "1.1.0")
	r.reg.PushImage(t, "myregistry/myapp", t0, "1.0.0")
	r.reg.PushImage(t, "myregistry/myapp", t0.Add(time.Hour), "1.2.0")
	r.reg.PushImage(t, "myregistry/myapp", t0.Add(2*time.Hour), "2.0.0")
	r.reg.PushImage(t, "org/backend", t0, "0.9.0")
	backend := r.reg.PushImage(t, "org/backend", t0.Add(time.Hour), "1.0.0")
	r.reg.PushImage(t, "library/no-signature", t0, "1.24.0")
	r.reg.PushImage(t, "library/no-signature", t0.Add(time.Hour), "1.25.0")
	key := r.cosignKeys("myapp-cosign-pubkey")
	r.reg.SignCosign(t, "org/backend", backend, key)

	r.kustomizeApp("app-001", nil, nil, "nginx:1.17.9")
	r.kustomizeApp("annotated", map[string]string{"image-updater": "my-image-updater"},
		map[string]string{p + "image-list": "web=team/web"}, "team/web:1.0.0")
	plugin := func(name string, env ...string) {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "app", TargetRevision: "main",
				Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "images"}},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name}}}
		for i := 0; i < len(env); i += 2 {
			app.Spec.Source.Plugin.Env = append(app.Spec.Source.Plugin.Env, &v1alpha1.EnvEntry{Name: env[i], Value: env[i+1]})
		}
		r.create(app)
	}
	plugin("my-plugin-app", "IMAGE_NAME", "myregistry/myapp", "IMAGE_TAG", "1.0.0", "OTHER", "kept")
	plugin("my-plugin-app-spec", "APP_IMAGE", "myregistry/myapp:1.0.0")
	r.kustomizeApp("my-app", nil, nil, "ghcr.io/org/backend:0.9.0", "no-signature:1.24.0")
	for _, file := range []string{"-short", "-plugin", "-verification"} {
		r.sample(file)
	}

	res := r.runOnce()
	if res.Errors != 0 || res.Updated != 6 {
		t.Errorf("cycle %+v, want six images updated", res)
	}
	for name, want := range map[string]string{
		"app-001":   "[nginx:1.17.10]", // the sample's nginx:1.17.10 pins that version
		"annotated": "[team/web:1.1.0]",
		"my-app":    "[ghcr.io/org/backend:1.0.0 no-signature:1.25.0]",
	} {
		if got := fmt.Sprint(r.spec(name).Source.Kustomize.Images); got != want {
			t.Errorf("%s: images %s, want %s", name, got, want)
		}
	}
	env := func(name string) string {
		var out []string
		for _, e := range r.spec(name).Source.Plugin.Env {
			out = append(out, e.Name+"="+e.Value)
		}
		return strings.Join(out, " ")
	}
	if got := env("my-plugin-app"); got != "IMAGE_NAME=myregistry/myapp IMAGE_TAG=1.2.0 OTHER=kept" {
		t.Errorf("my-plugin-app: %s", got)
	}
	if got := env("my-plugin-app-spec"); got != "APP_IMAGE=myregistry/myapp:1.2.0" {
		t.Errorf("my-plugin-app-spec: %s", got)
	}
	for name, apps := range map[string]int32{
		"argocd-image-updater-sample-short": 1, "argocd-image-updater-sample-short-1": 1,
		"argocd-image-updater-sample-plugin": 2, "argocd-image-updater-verification": 1,
	} {
		s := r.status(name)
		if got := condition(s, iuv1.ConditionReady); s.ApplicationsMatched != apps || !strings.HasPrefix(got, "True ReconcileSucceeded") {
			t.Errorf("%s: %d Applications (want %d), Ready %s", name, s.ApplicationsMatched, apps, got)
		}
	}
}

// The full sample and the pull request sample hold placeholders
// (secret:<namespace>/<secret_name>#<field>) and an example repository
// on github.com: the API server takes them, and the updater says in
// their status what stops them, writing nothing.
func TestImageUpdaterSamplesWithPlaceholders(t *testing.T) {
	localcluster.Need(t)
	for _, c := range []struct{ file, name, want string }{
		{"", "argocd-image-updater-sample", "credentials secret:<namespace>/<secret_name>#<field>"},
		{"-pull-request", "argocd-image-updater-github", "github.com"},
	} {
		t.Run(strings.TrimPrefix(c.file, "-"), func(t *testing.T) {
			r := newBareRig(t, "", "", nil)
			r.dockerConfigSecret("pull", r.reg.Password)
			r.samplesRegistries()
			r.reg.PushImage(t, "library/nginx", t0, "1.17.9", "1.17.10")
			r.reg.PushImage(t, "library/test", t0, "1.0.0", "1.1.0")
			r.kustomizeApp("app-001", nil, nil, "nginx:1.17.9", "test:1.0.0")
			r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "git-creds-ssh", Namespace: r.ns}})
			// The samples' git:secret:git-creds, as Image Updater's
			// documentation sets it up.
			r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "git-creds", Namespace: r.ns},
				StringData: map[string]string{"username": r.git.Username, "password": r.git.Password}})
			r.sample(c.file)
			r.runOnce()
			s := r.status(c.name)
			t.Logf("%s: Error %s", c.name, condition(s, iuv1.ConditionError))
			if got := condition(s, iuv1.ConditionError); s.ApplicationsMatched != 1 || !strings.HasPrefix(got, "True") || !strings.Contains(got, c.want) {
				t.Errorf("%s: %d Applications, Error %s; want one, naming %q", c.name, s.ApplicationsMatched, got, c.want)
			}
			if got := fmt.Sprint(r.spec("app-001").Source.Kustomize.Images); got != "[nginx:1.17.9 test:1.0.0]" {
				t.Errorf("app-001 was written: %s", got)
			}
		})
	}
}
