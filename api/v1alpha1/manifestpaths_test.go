package v1alpha1

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestManifestGeneratePaths(t *testing.T) {
	src := ApplicationSource{Path: "apps/web"}
	for _, tc := range []struct {
		annotation string
		set        bool
		want       string
	}{
		{"", false, ""},
		{".", true, "apps/web"},
		{".;../shared; /charts/base ;", true, "apps/web,apps/shared,charts/base"},
		{"/", true, "."},
		{"../../..", true, "."},
		{"*.yaml", true, "apps/web/*.yaml"},
	} {
		app := &Application{ObjectMeta: metav1.ObjectMeta{}}
		if tc.set {
			app.Annotations = map[string]string{AnnotationManifestGeneratePaths: tc.annotation}
		}
		if got := strings.Join(app.ManifestGeneratePaths(src), ","); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.annotation, got, tc.want)
		}
	}
}

func TestPathsChanged(t *testing.T) {
	paths := []string{"apps/web", "charts/*.tgz"}
	for _, tc := range []struct {
		files []string
		want  bool
	}{
		{[]string{"apps/web/deploy.yaml"}, true},
		{[]string{"apps/web"}, true},
		{[]string{"apps/webby/x.yaml"}, false},
		{[]string{"apps/api/x.yaml", "README.md"}, false},
		{[]string{"charts/base.tgz"}, true},
		{[]string{"/apps/web/x"}, true},
		{nil, true}, // the push listed no files
	} {
		if got := PathsChanged(paths, tc.files); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.files, got, tc.want)
		}
	}
	if !PathsChanged(nil, []string{"x"}) {
		t.Error("an Application without the annotation is not refreshed")
	}
	if !PathsChanged([]string{"."}, []string{"anything/at/all"}) {
		t.Error("the root does not cover every file")
	}
}
