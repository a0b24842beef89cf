package diff

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

func TestManagedFieldsManagersAreIgnored(t *testing.T) {
	localcluster.Need(t)
	f := setup(t)
	desired := f.desired(strings.Replace(desiredYAML, "spec:\n  selector", "spec:\n  replicas: 2\n  selector", 1))
	f.apply(desired, "capstan")
	// An autoscaler takes replicas, a bot takes one container's image (an
	// associative list item, keyed by name).
	f.apply(f.desired(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 5}}`), "autoscaler")
	liveObj := f.apply(f.desired(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web},
  spec: {template: {spec: {containers: [{name: web, image: "nginx:1.28"}]}}}}`), "image-bot")
	liveObj.SetManagedFields(nil) // as the watch cache holds it: the differ must read the managers itself

	rule := func(managers ...string) v1alpha1.ResourceIgnoreDifferences {
		return v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: managers}
	}
	if r := f.diff(desired, liveObj); !r.Modified {
		t.Fatal("replicas and image set by other managers read as in sync")
	}
	if r := f.diff(desired, liveObj, rule("autoscaler")); !r.Modified {
		t.Error("ignoring the autoscaler's fields hid the bot's image too")
	}
	if r := f.diff(desired, liveObj, rule("autoscaler", "image-bot")); r.Modified {
		t.Errorf("both managers ignored, still modified:\npredicted %v\nlive %v", r.Predicted.Object["spec"], r.Live.Object["spec"])
	}
	if r := f.diff(desired, liveObj, rule("someone-else")); !r.Modified {
		t.Error("a manager that owns nothing hid the drift")
	}
}

func TestSecretValuesAreMasked(t *testing.T) {
	localcluster.Need(t)
	f := setup(t)
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	liveObj := f.applyTo(secrets, f.desired(`{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {a: `+b64("old-password")+`, b: `+b64("same")+`}}`), "capstan")
	desired := f.desired(`{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {a: ` + b64("new-password") + `, b: ` + b64("same") + `}}`)
	r := f.diff(desired, liveObj)
	if !r.Modified {
		t.Fatal("a changed Secret value reads as in sync")
	}
	pd, ld := r.Predicted.Object["data"].(map[string]any), r.Live.Object["data"].(map[string]any)
	for _, obj := range []map[string]any{pd, ld} {
		for k, v := range obj {
			if strings.Trim(v.(string), "+") != "" {
				t.Errorf("data.%s shown as %q, want a mask", k, v)
			}
		}
	}
	if pd["a"] == ld["a"] {
		t.Error("a changed value has the same mask on both sides")
	}
	if pd["b"] != ld["b"] {
		t.Error("an unchanged value has different masks")
	}
	if r := f.diff(desired, nil); strings.Contains(r.Predicted.Object["data"].(map[string]any)["a"].(string), b64("new-password")) {
		t.Error("a Secret to be created shows its value")
	}
}
