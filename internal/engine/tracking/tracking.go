// Package tracking links live objects to the Application that manages them,
// as Argo CD does: by the argocd.argoproj.io/tracking-id annotation
// (`<app>:<group>/<kind>:<namespace>/<name>`, the default) or by the
// app.kubernetes.io/instance label.
package tracking

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Method is argocd-cm's application.resourceTrackingMethod.
type Method string

// Tracking methods.
const (
	Annotation         Method = "annotation"
	Label              Method = "label"
	AnnotationAndLabel Method = "annotation+label"
)

// ParseMethod reads application.resourceTrackingMethod; empty means annotation.
func ParseMethod(s string) (Method, error) {
	switch m := Method(strings.TrimSpace(s)); m {
	case "":
		return Annotation, nil
	case Annotation, Label, AnnotationAndLabel:
		return m, nil
	default:
		return "", fmt.Errorf("application.resourceTrackingMethod %q: want annotation, label or annotation+label", s)
	}
}

// AppKey names an Application in tracking ids: its name, or
// <namespace>_<name> for Applications outside the control namespace.
func AppKey(appNamespace, appName, controlNamespace string) string {
	if appNamespace == "" || appNamespace == controlNamespace {
		return appName
	}
	return appNamespace + "_" + appName
}

// ID is the tracking id of obj for the Application named app.
func ID(app string, obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return fmt.Sprintf("%s:%s/%s:%s/%s", app, gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName())
}

// Set marks obj as managed by app with the method's annotation and/or label.
func Set(m Method, app string, obj *unstructured.Unstructured) {
	if m == Annotation || m == AnnotationAndLabel {
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[v1alpha1.AnnotationTrackingID] = ID(app, obj)
		obj.SetAnnotations(a)
	}
	if m == Label || m == AnnotationAndLabel {
		l := obj.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[v1alpha1.LabelAppInstance] = app
		obj.SetLabels(l)
	}
}

// App returns the Application that manages obj, or "". With the
// annotation, the id must name obj itself: an annotation copied onto
// another object (by a controller cloning a template) does not count.
func App(m Method, obj *unstructured.Unstructured) string {
	if m == Label {
		return obj.GetLabels()[v1alpha1.LabelAppInstance]
	}
	id := obj.GetAnnotations()[v1alpha1.AnnotationTrackingID]
	if id == "" {
		return ""
	}
	app, _, ok := strings.Cut(id, ":")
	if !ok || id != ID(app, obj) {
		return ""
	}
	return app
}
