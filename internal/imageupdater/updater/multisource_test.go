package updater

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestMultiSourceApplication: a multi-source Application (a chart, and a
// Git repository its values come from) gets the new tag as Helm
// parameters of its chart's source, the other source left alone.
func TestMultiSourceApplication(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("team/multi")
	r.reg.PushImage(t, "team/multi", t0, "1.0.0", "1.1.0")
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "multi", Namespace: r.ns, Annotations: map[string]string{
			p + "image-list": "web=" + image, p + "pull-secret": "pullsecret:" + r.ns + "/pull", p + "force-update": "true",
			p + "web.helm.image-name": "image.repository", p + "web.helm.image-tag": "image.tag",
		}},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Sources: v1alpha1.ApplicationSources{
				{RepoURL: r.repo.URL, Ref: "values"},
				{RepoURL: r.repo.URL, Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/prod.yaml"}}},
			},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "multi"}},
	}
	r.create(app)
	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Fatalf("cycle %+v, want the multi-source app updated", res)
	}
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	chart, values := app.Spec.Sources[1], app.Spec.Sources[0]
	if chart.Helm == nil || len(chart.Helm.Parameters) != 2 || chart.Helm.Parameters[1].Name != "image.tag" || chart.Helm.Parameters[1].Value != "1.1.0" {
		t.Errorf("the chart's source: %+v", chart.Helm)
	}
	if values.Helm != nil || values.Kustomize != nil {
		t.Errorf("the values source changed: %+v", values)
	}
}

// A multi-source Application whose sources each deploy an image of their
// own has both images updated, each in its own source: in the spec
// (argocd), and in each source's directory of Git (git).
func TestMultiSourceEachSourcesImages(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "pullsecret:$NS/pull", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	fe, be := r.image("multi/frontend"), r.image("multi/backend")
	r.reg.PushImage(t, "multi/frontend", t0, "1.0.0", "1.1.0")
	r.reg.PushImage(t, "multi/backend", t0, "2.0.0", "2.1.0")
	r.repo.Commit(t, "two", map[string]string{
		"fe/kustomization.yaml": "resources: []\n",
		"be/kustomization.yaml": "resources: []\n",
	})
	for _, method := range []string{"argocd", "git"} {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: "two-" + method, Namespace: r.ns, Annotations: map[string]string{
				p + "image-list": "fe=" + fe + ",be=" + be, p + "write-back-method": method,
			}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Sources: v1alpha1.ApplicationSources{
					{RepoURL: r.repo.URL, Path: "fe", TargetRevision: "main", Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: v1alpha1.KustomizeImages{v1alpha1.KustomizeImage(fe + ":1.0.0")}}},
					{RepoURL: r.repo.URL, Path: "be", TargetRevision: "main", Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: v1alpha1.KustomizeImages{v1alpha1.KustomizeImage(be + ":2.0.0")}}},
				},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "two"}},
		}
		r.create(app)
	}
	if res := r.runOnce(); res.Updated != 4 || res.Errors != 0 {
		t.Fatalf("cycle %+v, want both images of both Applications updated", res)
	}
	var app v1alpha1.Application
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: "two-argocd"}, &app); err != nil {
		t.Fatal(err)
	}
	if got := []v1alpha1.KustomizeImages{app.Spec.Sources[0].Kustomize.Images, app.Spec.Sources[1].Kustomize.Images}; len(got[0]) != 1 || len(got[1]) != 1 ||
		string(got[0][0]) != fe+":1.1.0" || string(got[1][0]) != be+":2.1.0" {
		t.Errorf("argocd write-back: sources' images %v", got)
	}
	r.repo.Pull(t)
	for dir, want := range map[string]string{"fe": fe + ":1.1.0", "be": be + ":2.1.0"} {
		if got := r.repo.File(t, dir+"/.argocd-source-two-git.yaml"); !strings.Contains(got, want) || strings.Count(got, "- ") != 1 {
			t.Errorf("git write-back: %s/.argocd-source-two-git.yaml:\n%s\nwant only %s", dir, got, want)
		}
	}
}
