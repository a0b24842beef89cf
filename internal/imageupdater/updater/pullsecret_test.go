package updater

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestPullSecretOnlyFromAllowedNamespaces is a finding of the tenant
// review: an Application's pull-secret annotation naming a Secret of
// another tenant's namespace is refused before the Secret is read, and
// the registry hears nothing; the Application's own namespace works, and
// pullsecret.namespaces widens the choice.
func TestPullSecretOnlyFromAllowedNamespaces(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "", "", nil)
	other := cluster.NewNamespace(t)
	r.reg.PushImage(t, "team/app", t0, "1.0.0")
	r.reg.PushImage(t, "team/app", t0.Add(1), "1.1.0")
	r.dockerConfigSecret("pull", r.reg.Password)
	foreign := &corev1.Secret{}
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: "pull"}, foreign); err != nil {
		t.Fatal(err)
	}
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull", Namespace: other}, Type: foreign.Type, Data: foreign.Data})
	mk := func(name, secretNS string) *v1alpha1.Application {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns, Annotations: map[string]string{
				p + "image-list": "app=" + r.image("team/app"), p + "force-update": "true",
				p + "pull-secret": "pullsecret:" + secretNS + "/pull"}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "x", Kustomize: &v1alpha1.ApplicationSourceKustomize{}},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "dest-" + name}},
		}
		r.create(app)
		return app
	}
	mk("own", r.ns)
	sneaky := mk("sneaky", other)
	before := r.reg.Requests()
	if res := r.runOnce(); res.Updated != 1 || res.Errors != 1 {
		t.Fatalf("cycle %+v, want the app naming its own namespace's Secret updated and the other refused", res)
	}
	r.event(sneaky, "ImageCheckFailed", "may not be named")
	if n := r.reg.Requests() - before; n != 1 {
		t.Errorf("the registry got %d requests, want the one tag list of the allowed app", n)
	}

	r.configure(func(data map[string]string) { data[config.PullSecretNamespacesKey] = other })
	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Errorf("with %s=%s: %+v, want the other app updated", config.PullSecretNamespacesKey, other, res)
	}
}
