package applicationset

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestSlimApplication holds what the controller reads and writes of an
// Application, and none of the rest of its status.
func TestSlimApplication(t *testing.T) {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"l": "v"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec:       v1alpha1.ApplicationSpec{Project: "default"},
		Status: v1alpha1.ApplicationStatus{
			Sync:           v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "abc"},
			Health:         v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusHealthy},
			Resources:      []v1alpha1.ResourceStatus{{Kind: "ConfigMap", Name: "c"}},
			History:        []v1alpha1.RevisionHistory{{Revision: "abc"}},
			OperationState: &v1alpha1.OperationState{Phase: v1alpha1.OperationSucceeded, Message: "long", StartedAt: metav1.Unix(10, 0)},
			Conditions:     []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionUnknownError, Message: "m"}, {Type: "SyncError", Message: "s"}},
		},
	}
	want := app.DeepCopy()
	want.ManagedFields = nil
	// What progressive syncs read: revisions, when the sync started, and
	// whether the Application is in error.
	want.Status = v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "abc"}, Health: app.Status.Health,
		OperationState: &v1alpha1.OperationState{Phase: v1alpha1.OperationSucceeded, StartedAt: metav1.Unix(10, 0)},
		Conditions:     []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionUnknownError}}}
	got, err := slimApplication(app)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("slim:\n%+v\nwant\n%+v", got, want)
	}
	if other, _ := slimApplication(&v1alpha1.ApplicationSet{}); other == nil {
		t.Error("another kind is not passed through")
	}
}
