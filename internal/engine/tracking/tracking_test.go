package tracking

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func deploy(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestAnnotationTracking(t *testing.T) {
	d := deploy("web", "frontend")
	Set(Annotation, "guestbook", d)
	if got := d.GetAnnotations()[v1alpha1.AnnotationTrackingID]; got != "guestbook:apps/Deployment:web/frontend" {
		t.Errorf("tracking id = %q", got)
	}
	if App(Annotation, d) != "guestbook" {
		t.Error("App did not read the annotation back")
	}
	// Copied to another object, the annotation does not make it managed.
	copied := deploy("web", "other")
	copied.SetAnnotations(d.GetAnnotations())
	if app := App(Annotation, copied); app != "" {
		t.Errorf("copied annotation claims %q", app)
	}
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("cluster-wide")
	Set(Annotation, "argocd_apps", cm)
	if got := cm.GetAnnotations()[v1alpha1.AnnotationTrackingID]; got != "argocd_apps:/ConfigMap:/cluster-wide" {
		t.Errorf("core, cluster-scoped tracking id = %q", got)
	}
}

func TestLabelTrackingAndMethods(t *testing.T) {
	d := deploy("web", "frontend")
	Set(AnnotationAndLabel, "shop", d)
	if d.GetLabels()[v1alpha1.LabelAppInstance] != "shop" || App(Label, d) != "shop" || App(Annotation, d) != "shop" {
		t.Errorf("annotation+label: labels %v annotations %v", d.GetLabels(), d.GetAnnotations())
	}
	for in, want := range map[string]Method{"": Annotation, "label": Label, " annotation+label ": AnnotationAndLabel} {
		if got, err := ParseMethod(in); err != nil || got != want {
			t.Errorf("ParseMethod(%q) = %s, %v", in, got, err)
		}
	}
	if _, err := ParseMethod("magic"); err == nil {
		t.Error("unknown method accepted")
	}
	if AppKey("argocd", "a", "argocd") != "a" || AppKey("team", "a", "argocd") != "team_a" {
		t.Error("AppKey")
	}
}

func TestInstanceLabelKey(t *testing.T) {
	m, err := FromSettings("label", "example.com/owner", "")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	Set(m, "shop", obj)
	if obj.GetLabels()["example.com/owner"] != "shop" || obj.GetLabels()["app.kubernetes.io/instance"] != "" || App(m, obj) != "shop" {
		t.Errorf("labels %v, app %q", obj.GetLabels(), App(m, obj))
	}
	if def, _ := FromSettings("annotation+label", "", ""); def.LabelKey() != "app.kubernetes.io/instance" || def.String() != "annotation+label" {
		t.Errorf("default label key %q, name %q", def.LabelKey(), def.String())
	}
}

// TestInstallationID: with installationID set, the annotation names the
// installation too, and an object of another installation (or of none) is
// not the Application's; without it, the installation is not looked at
// and a stale mark is dropped on the next apply.
func TestInstallationID(t *testing.T) {
	blue, err := FromSettings("annotation", "", "blue")
	if err != nil || blue.InstallationID() != "blue" {
		t.Fatalf("FromSettings: %v %v", blue, err)
	}
	d := deploy("web", "frontend")
	Set(blue, "shop", d)
	if got := d.GetAnnotations()[v1alpha1.AnnotationInstallationID]; got != "blue" || App(blue, d) != "shop" {
		t.Errorf("blue's object: installation %q, app %q", got, App(blue, d))
	}
	green, _ := FromSettings("annotation+label", "", "green")
	if app := App(green, d); app != "" {
		t.Errorf("green reads blue's object as %q's", app)
	}
	unmarked := deploy("web", "legacy")
	Set(Annotation, "shop", unmarked)
	if app := App(blue, unmarked); app != "" {
		t.Errorf("blue reads an object of no installation as %q's", app)
	}
	if App(Annotation, d) != "shop" {
		t.Error("without installationID, an installation's mark stops the object being read")
	}
	Set(Annotation, "shop", d)
	if _, has := d.GetAnnotations()[v1alpha1.AnnotationInstallationID]; has {
		t.Error("applying without installationID kept the installation's mark")
	}
	label, _ := FromSettings("label", "", "blue")
	l := deploy("web", "labelled")
	Set(label, "shop", l)
	if _, has := l.GetAnnotations()[v1alpha1.AnnotationInstallationID]; has || App(label, l) != "shop" {
		t.Errorf("label tracking: annotations %v", l.GetAnnotations())
	}
}
