package applicationset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
)

// holdFinalizer keeps a deleted Application until the test lets it go, so
// the order of deletions can be watched.
const holdFinalizer = "test.capstan.io/hold"

// TestReverseDeletionOrder: with deletionOrder Reverse, a deleted
// RollingSync ApplicationSet is held by the resources finalizer while its
// Applications are deleted last step first, each step only once the
// previous one's are gone, those of no step last; then it goes.
func TestReverseDeletionOrder(t *testing.T) {
	e := start(t, func(o *applicationset.Options) { o.ProgressiveSyncs = true })
	ctx := context.Background()
	step := func(env string) v1alpha1.ApplicationSetRolloutStep {
		return v1alpha1.ApplicationSetRolloutStep{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{env}}}}
	}
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "ordered", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{List: &v1alpha1.ListGenerator{
			Elements: elements(t, map[string]any{"name": "dev-1", "env": "dev"}, map[string]any{"name": "qa-1", "env": "qa"},
				map[string]any{"name": "qa-2", "env": "qa"}, map[string]any{"name": "prod-1", "env": "prod"}, map[string]any{"name": "tools", "env": "none"}),
		}}}},
		Strategy: &v1alpha1.ApplicationSetStrategy{Type: "RollingSync", DeletionOrder: "Reverse", RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{
			Steps: []v1alpha1.ApplicationSetRolloutStep{step("dev"), step("qa"), step("prod")}}},
		Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{name}}", Labels: map[string]string{"env": "{{env}}"},
				Finalizers: []string{holdFinalizer}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/r", Path: "{{name}}"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{name}}"}},
		},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	e.waitApps("dev-1", "qa-1", "qa-2", "prod-1", "tools")
	e.eventually("the resources finalizer on the ApplicationSet", func() string {
		if f := e.appset("ordered").Finalizers; !slices.Contains(f, v1alpha1.ResourcesFinalizerName) {
			return fmt.Sprint(f)
		}
		return ""
	})
	if err := e.client.Delete(ctx, e.appset("ordered")); err != nil {
		t.Fatal(err)
	}
	for _, group := range [][]string{{"prod-1"}, {"qa-1", "qa-2"}, {"dev-1"}, {"tools"}} {
		e.eventually("deleting "+strings.Join(group, ","), func() string { return e.deleting(group) })
		for _, name := range group {
			e.release(name)
		}
	}
	e.eventually("the ApplicationSet gone", func() string {
		err := e.client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "ordered"}, &v1alpha1.ApplicationSet{})
		if !apierrors.IsNotFound(err) {
			return fmt.Sprint(err)
		}
		return ""
	})
}

// deleting reports "" when exactly the Applications named are being
// deleted among those left.
func (e *env) deleting(names []string) string {
	var list v1alpha1.ApplicationList
	if err := e.client.List(context.Background(), &list, client.InNamespace(e.ns)); err != nil {
		return err.Error()
	}
	var got []string
	for _, app := range list.Items {
		if app.DeletionTimestamp != nil {
			got = append(got, app.Name)
		}
	}
	slices.Sort(got)
	if strings.Join(got, ",") != strings.Join(names, ",") {
		return fmt.Sprintf("deleting %v", got)
	}
	return ""
}

// release lets a deleted Application go: the hold finalizer and, standing
// in for the application controller, the resources finalizer.
func (e *env) release(name string) {
	e.t.Helper()
	app := &v1alpha1.Application{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, app); err != nil {
		e.t.Fatal(err)
	}
	app.Finalizers = nil
	if err := e.client.Update(context.Background(), app); err != nil {
		e.t.Fatal(err)
	}
}
