package updater

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// TestRegistryWithItsOwnCertificateAuthority: a registry over HTTPS with a
// certificate no system trusts is refused until registries.conf gives its
// authority in ca_data, as Argo CD Image Updater reads it.
func TestRegistryWithItsOwnCertificateAuthority(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "", "", nil)
	reg := registryserver.StartTLS(t)
	reg.PushImage(t, "team/app", t0, "1.0.0")
	reg.PushImage(t, "team/app", t0.Add(1), "1.1.0")
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls-registry", Namespace: r.ns},
		StringData: map[string]string{"creds": reg.Username + ":" + reg.Password}})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: r.ns, Annotations: map[string]string{
			p + "image-list": "app=" + reg.Host + "/team/app", p + "force-update": "true"}},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "x", Kustomize: &v1alpha1.ApplicationSourceKustomize{}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "dest-tls"}},
	}
	r.create(app)
	setConf := func(extra string) {
		t.Helper()
		r.configure(func(data map[string]string) {
			data["registries.conf"] = fmt.Sprintf("registries:\n- name: tls registry\n  api_url: https://%s\n  prefix: %s\n  credentials: secret:%s/tls-registry#creds\n%s",
				reg.Host, reg.Host, r.ns, extra)
		})
	}
	setConf("")
	if res := r.runOnce(); res.Updated != 0 || res.Errors != 1 {
		t.Fatalf("cycle %+v, want the untrusted registry refused", res)
	}
	r.event(app, "ImageCheckFailed", "certificate")
	setConf("  ca_data: |\n    " + strings.ReplaceAll(strings.TrimSpace(string(reg.CA)), "\n", "\n    ") + "\n")
	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Fatalf("cycle %+v, want the image updated once the registry's authority is trusted", res)
	}
}
