package settings

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

func TestLoadArgoCD(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	absent, err := LoadArgoCD(ctx, c, ns)
	if err != nil || absent.Version != "" || len(absent.Data) != 0 || absent.TrackingMethod() != "" {
		t.Fatalf("without argocd-cm: %v %+v", err, absent)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: CMName}, Data: map[string]string{"application.resourceTrackingMethod": "label"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got, err := LoadArgoCD(ctx, c, ns)
	if err != nil || got.Version == "" || got.TrackingMethod() != "label" {
		t.Fatalf("with argocd-cm: %v %+v", err, got)
	}
}

func TestSessionDuration(t *testing.T) {
	for value, want := range map[string]time.Duration{"": DefaultSessionDuration, "1h": time.Hour, "90m": 90 * time.Minute, "soon": DefaultSessionDuration, "-1h": DefaultSessionDuration} {
		got, err := (&ArgoCD{Data: map[string]string{SessionDurationKey: value}}).SessionDuration()
		if got != want || (err != nil) != (value == "soon" || value == "-1h") {
			t.Errorf("%q: %s, %v; want %s", value, got, err, want)
		}
	}
}

func TestKustomizeVersions(t *testing.T) {
	cm := &ArgoCD{Data: map[string]string{
		"kustomize.path.v3.5.4":          "/custom-tools/kustomize_3_5_4",
		"kustomize.buildOptions.v3.5.4":  "--load-restrictor LoadRestrictionsNone",
		"kustomize.version.v3.5.1":       "/custom-tools/kustomize_3_5_1", // the older key
		"kustomize.version.v3.5.4":       "/older/kustomize",              // kustomize.path wins
		"kustomize.buildOptions":         "--enable-helm",                 // the built-in's
		"kustomize.buildOptions.v9.9.9":  "--reorder none",                // no program: no version
		"kustomize.pathology.unexpected": "x",
	}}
	want := []v1alpha1.KustomizeVersion{
		{Name: "v3.5.1", Path: "/custom-tools/kustomize_3_5_1"},
		{Name: "v3.5.4", Path: "/custom-tools/kustomize_3_5_4", BuildOptions: "--load-restrictor LoadRestrictionsNone"},
	}
	if got := cm.KustomizeVersions(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
