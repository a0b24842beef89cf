package controller

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestStatusPatchTurnsBaseIntoNext applies each patch to the whole base
// object, as the API server does, and expects exactly next; and to a base a
// user changed meanwhile, whose change must survive.
func TestStatusPatchTurnsBaseIntoNext(t *testing.T) {
	base := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: "argocd", ResourceVersion: "7", Labels: map[string]string{"team": "a"},
			Annotations: map[string]string{v1alpha1.AnnotationRefresh: "normal"}},
		Spec:      v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Namespace: "guestbook"}},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "abc"}},
		Status:    v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeOutOfSync}},
	}
	for name, change := range map[string]func(*v1alpha1.Application){
		"status":           func(a *v1alpha1.Application) { a.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced },
		"refresh answered": func(a *v1alpha1.Application) { delete(a.Annotations, v1alpha1.AnnotationRefresh) },
		"operation ended": func(a *v1alpha1.Application) {
			a.Operation = nil
			a.Status.Health.Status = v1alpha1.HealthStatusHealthy
		},
		"nothing": func(*v1alpha1.Application) {},
	} {
		t.Run(name, func(t *testing.T) {
			next := base.DeepCopy()
			change(next)
			data, err := statusPatch{base: base, lock: true}.Data(next)
			if err != nil {
				t.Fatal(err)
			}
			var patch map[string]any
			if err := json.Unmarshal(data, &patch); err != nil {
				t.Fatal(err)
			}
			if _, ok := patch["spec"]; ok {
				t.Errorf("patch %s sends the spec", data)
			}
			if rv := patch["metadata"].(map[string]any)["resourceVersion"]; rv != "7" {
				t.Errorf("patch %s: resourceVersion %v, want the base's 7 for the lock", data, rv)
			}
			expectPatched(t, base, data, next)

			// A user's annotation added since base was read is kept.
			theirs, ours := base.DeepCopy(), next.DeepCopy()
			theirs.Annotations["team/owner"] = "ops"
			ours.Annotations = map[string]string{"team/owner": "ops"}
			if v, ok := next.Annotations[v1alpha1.AnnotationRefresh]; ok {
				ours.Annotations[v1alpha1.AnnotationRefresh] = v
			}
			expectPatched(t, theirs, data, ours)
		})
	}
}

// expectPatched applies the merge patch data to from and compares the
// result with want, leaving the resourceVersion out.
func expectPatched(t *testing.T, from *v1alpha1.Application, data []byte, want *v1alpha1.Application) {
	t.Helper()
	doc, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := jsonpatch.MergePatch(doc, data)
	if err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.Application{}
	if err := json.Unmarshal(patched, got); err != nil {
		t.Fatal(err)
	}
	w, g := want.DeepCopy(), got
	w.ResourceVersion, g.ResourceVersion = "", ""
	if len(w.Annotations) == 0 && len(g.Annotations) == 0 {
		w.Annotations, g.Annotations = nil, nil
	}
	a, _ := json.Marshal(g)
	b, _ := json.Marshal(w)
	if string(a) != string(b) {
		t.Errorf("patched\n%s\nwant\n%s", a, b)
	}
}
