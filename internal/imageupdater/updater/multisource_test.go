package updater

import (
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
