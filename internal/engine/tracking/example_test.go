package tracking_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/internal/engine/tracking"
)

func ExampleSet() {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace("shop")
	obj.SetName("web")

	// An Application in the control namespace is named by its name alone.
	app := tracking.AppKey("argocd", "guestbook", "argocd")
	tracking.Set(tracking.Annotation, app, obj)
	fmt.Println(obj.GetAnnotations()["argocd.argoproj.io/tracking-id"])
	fmt.Println(tracking.App(tracking.Annotation, obj))
	// Output:
	// guestbook:apps/Deployment:shop/web
	// guestbook
}
