package updater

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// With tagsortmode, newest-build takes the registry's listing order for
// the build dates and reads no tag's metadata; without it, the dates.
// The test registry lists tags alphabetically, and c3 is the oldest
// build: latest-last picks c3, the build dates pick a1.
func TestTagSortMode(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "pullsecret:$NS/pull", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("sorted/web")
	r.reg.PushImage(t, "sorted/web", t0.Add(3*time.Hour), "a1")
	r.reg.PushImage(t, "sorted/web", t0.Add(2*time.Hour), "b2")
	r.reg.PushImage(t, "sorted/web", t0.Add(time.Hour), "c3")
	r.reg.PushImage(t, "sorted/web", t0, "z0")
	for _, mode := range []string{"latest-last", "none"} {
		r.configure(func(data map[string]string) {
			data["registries.conf"] = fmt.Sprintf("registries:\n- name: test\n  api_url: http://%[1]s\n  prefix: %[1]s\n  insecure: yes\n  credentials: pullsecret:%[2]s/pull\n  tagsortmode: %[3]s\n", r.reg.Host, r.ns, mode)
		})
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "sorted-" + mode, Namespace: r.ns, Annotations: map[string]string{
			p + "image-list": "web=" + image, p + "web.update-strategy": "newest-build", p + "web.ignore-tags": "z0",
		}}, Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "web",
			Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: v1alpha1.KustomizeImages{v1alpha1.KustomizeImage(image + ":z0")}}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "sorted"}}}
		r.create(app)
		before := r.reg.Requests()
		if res := r.runOnce(); res.Errors != 0 || res.Updated != 1 {
			t.Fatalf("%s: cycle %+v", mode, res)
		}
		if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(app), app); err != nil {
			t.Fatal(err)
		}
		want, requests := image+":a1", r.reg.Requests()-before
		if mode == "latest-last" {
			want = image + ":c3"
			// The tag list (and the token exchange), no manifest.
			if requests > 3 {
				t.Errorf("latest-last: %d registry requests, want no metadata read", requests)
			}
		}
		if got := string(app.Spec.Source.Kustomize.Images[0]); got != want {
			t.Errorf("%s: %s, want %s", mode, got, want)
		}
		if err := r.c.Delete(r.ctx, app); err != nil {
			t.Fatal(err)
		}
	}
}
