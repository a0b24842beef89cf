package tracking

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// FuzzApp reads tracking ids as found on live objects (anyone can write
// one): App must never panic, and names an app only for an id that names
// the object itself.
func FuzzApp(f *testing.F) {
	for _, seed := range []string{"shop:apps/Deployment:ns/web", "shop:/ConfigMap:ns/x", ":::", "a:b", "", "x:apps/Deployment:ns/other"} {
		f.Add(seed, "web", "ns")
	}
	f.Fuzz(func(t *testing.T, id, name, namespace string) {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("apps/v1")
		obj.SetKind("Deployment")
		obj.SetName(name)
		obj.SetNamespace(namespace)
		obj.SetAnnotations(map[string]string{v1alpha1.AnnotationTrackingID: id})
		app := App(Annotation, obj)
		if app != "" && ID(app, obj) != id {
			t.Fatalf("App(%q) = %q, but the object's id would be %q", id, app, ID(app, obj))
		}
		_, _ = ParseMethod(id)
	})
}
