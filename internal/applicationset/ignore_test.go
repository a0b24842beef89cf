package applicationset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestIgnoreApplicationDifferences: a field ignoreApplicationDifferences
// names keeps the Application's value, by JSON pointer and by jq path; a
// jq expression that loops forever ends with an ErrorOccurred condition
// instead of holding the controller's worker, and changes nothing.
func TestIgnoreApplicationDifferences(t *testing.T) {
	localcluster.Need(t)
	e := start(t, nil)
	ctx := context.Background()
	as := &v1alpha1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ignore", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSetSpec{
			GoTemplate: true,
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				List: &v1alpha1.ListGenerator{Elements: elements(t, map[string]any{"app": "web"})},
			}}},
			Template: v1alpha1.ApplicationSetTemplate{
				ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{.app}}"},
				Spec: v1alpha1.ApplicationSpec{
					Project:     "default",
					Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/apps", Path: "{{.app}}", TargetRevision: "main"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{.app}}"},
				},
			},
			IgnoreApplicationDifferences: v1alpha1.ApplicationSetIgnoreDifferences{
				{JSONPointers: []string{"/spec/source/targetRevision"}, JQPathExpressions: []string{".spec.destination.namespace"}},
			},
		},
	}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	app := e.waitApps("web")["web"]
	app.Spec.Source.TargetRevision = "release-1"
	app.Spec.Destination.Namespace = "web-canary"
	app.Spec.Source.Path = "changed-by-hand"
	if err := e.client.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.eventually("the ignored fields kept, the others restored", func() string {
		a := e.apps()["web"]
		if a.Spec.Source.Path != "web" || a.Spec.Source.TargetRevision != "release-1" || a.Spec.Destination.Namespace != "web-canary" {
			return fmt.Sprintf("path %s, revision %s, namespace %s", a.Spec.Source.Path, a.Spec.Source.TargetRevision, a.Spec.Destination.Namespace)
		}
		return ""
	})

	e.update("ignore", func(as *v1alpha1.ApplicationSet) {
		as.Spec.IgnoreApplicationDifferences = v1alpha1.ApplicationSetIgnoreDifferences{{JQPathExpressions: []string{".spec | until(false; .)"}}}
		as.Spec.Template.Spec.Source.Path = "{{.app}}-v2"
	})
	e.eventually("ErrorOccurred", func() string {
		c := e.condition("ignore", v1alpha1.ApplicationSetConditionErrorOccurred)
		if c.Status != "True" || !strings.Contains(c.Message, "not done in time") {
			return fmt.Sprintf("%+v", c)
		}
		return ""
	})
	if a := e.apps()["web"]; a.Spec.Source.Path != "web" {
		t.Errorf("the failed update changed the path to %s", a.Spec.Source.Path)
	}

	// The loop ended: with the rule fixed the controller goes on.
	e.update("ignore", func(as *v1alpha1.ApplicationSet) {
		as.Spec.IgnoreApplicationDifferences = nil
	})
	e.eventually("updated", func() string {
		if a := e.apps()["web"]; a.Spec.Source.Path != "web-v2" {
			return "path " + a.Spec.Source.Path
		}
		return ""
	})
}
