// Package tracking links live objects to the Application that manages them,
// as Argo CD does: by the argocd.argoproj.io/tracking-id annotation
// (`<app>:<group>/<kind>:<namespace>/<name>`, the default) or by the
// app.kubernetes.io/instance label (or the one application.instanceLabelKey
// names). With argocd-cm's installationID set, the annotation also names
// the installation (argocd.argoproj.io/installation-id), so several
// installations can share a cluster without taking each other's objects.
package tracking

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Method is argocd-cm's application.resourceTrackingMethod, with the
// label application.instanceLabelKey names. The zero Method is unset;
// the methods below take it as Annotation.
type Method struct {
	kind string
	// labelKey is the instance label; "" is app.kubernetes.io/instance.
	labelKey string
	// installation is argocd-cm's installationID; "" when unset.
	installation string
}

// Tracking methods.
var (
	Annotation         = Method{kind: "annotation"}
	Label              = Method{kind: "label"}
	AnnotationAndLabel = Method{kind: "annotation+label"}
)

// ParseMethod reads application.resourceTrackingMethod; empty means annotation.
func ParseMethod(s string) (Method, error) {
	for _, m := range []Method{Annotation, Label, AnnotationAndLabel} {
		if strings.TrimSpace(s) == m.kind {
			return m, nil
		}
	}
	if strings.TrimSpace(s) == "" {
		return Annotation, nil
	}
	return Method{}, fmt.Errorf("application.resourceTrackingMethod %q: want annotation, label or annotation+label", s)
}

// FromSettings is the method argocd-cm's application.resourceTrackingMethod,
// application.instanceLabelKey ("" for the default label) and
// installationID ("" for none) describe.
func FromSettings(method, labelKey, installationID string) (Method, error) {
	m, err := ParseMethod(method)
	m.labelKey = strings.TrimSpace(labelKey)
	m.installation = strings.TrimSpace(installationID)
	return m, err
}

// InstallationID is argocd-cm's installationID the method marks objects
// with; "" when unset.
func (m Method) InstallationID() string { return m.installation }

// IsZero reports whether m is unset.
func (m Method) IsZero() bool { return m.kind == "" }

// String is the method's name, as argocd-cm spells it.
func (m Method) String() string {
	if m.IsZero() {
		return Annotation.kind
	}
	return m.kind
}

// LabelKey is the label the method writes and reads.
func (m Method) LabelKey() string {
	if m.labelKey == "" {
		return v1alpha1.LabelAppInstance
	}
	return m.labelKey
}

func (m Method) annotates() bool { return m.kind != Label.kind }
func (m Method) labels() bool    { return m.kind == Label.kind || m.kind == AnnotationAndLabel.kind }

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

// Set marks obj as managed by app with the method's annotation and/or
// label, and with the annotation, as this installation's (or no
// installation's when installationID is unset).
func Set(m Method, app string, obj *unstructured.Unstructured) {
	if m.annotates() {
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[v1alpha1.AnnotationTrackingID] = ID(app, obj)
		if m.installation != "" {
			a[v1alpha1.AnnotationInstallationID] = m.installation
		} else {
			delete(a, v1alpha1.AnnotationInstallationID)
		}
		obj.SetAnnotations(a)
	}
	if m.labels() {
		l := obj.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[m.LabelKey()] = app
		obj.SetLabels(l)
	}
}

// App returns the Application that manages obj, or "". With the
// annotation, the id must name obj itself: an annotation copied onto
// another object (by a controller cloning a template) does not count;
// and with installationID set, obj must be marked as this installation's.
func App(m Method, obj *unstructured.Unstructured) string {
	if !m.annotates() {
		return obj.GetLabels()[m.LabelKey()]
	}
	annotations := obj.GetAnnotations()
	if m.installation != "" && annotations[v1alpha1.AnnotationInstallationID] != m.installation {
		return ""
	}
	id := annotations[v1alpha1.AnnotationTrackingID]
	if id == "" {
		return ""
	}
	app, _, ok := strings.Cut(id, ":")
	if !ok || id != ID(app, obj) {
		return ""
	}
	return app
}
