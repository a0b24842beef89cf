package applicationset_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// listAppSet is an ApplicationSet of one Application per name.
func listAppSet(t *testing.T, ns, name string, names ...string) *v1alpha1.ApplicationSet {
	var elems []map[string]any
	for _, n := range names {
		elems = append(elems, map[string]any{"name": n})
	}
	return &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			List: &v1alpha1.ListGenerator{Elements: elements(t, elems...)}}}},
		Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{name}}"},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git", Path: "{{name}}"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"}}},
	}}
}

// TestControllerOptions: the settings of argocd-cmd-params-cm the
// ApplicationSet controller takes change what it writes.
func TestControllerOptions(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()

	t.Run("dry run writes no Application", func(t *testing.T) {
		e := start(t, func(o *applicationset.Options) { o.DryRun = true })
		if err := e.client.Create(ctx, listAppSet(t, e.ns, "dry", "a", "b")); err != nil {
			t.Fatal(err)
		}
		e.in(t).eventually("the ApplicationSet's status", func() string {
			if as := e.appset("dry"); len(as.Status.Conditions) == 0 {
				return "no conditions yet"
			}
			return ""
		})
		if apps := e.apps(); len(apps) != 0 {
			t.Errorf("a dry run made %d Applications", len(apps))
		}
	})

	t.Run("status resources bounded", func(t *testing.T) {
		e := start(t, func(o *applicationset.Options) { o.MaxResourcesStatus = 1 })
		if err := e.client.Create(ctx, listAppSet(t, e.ns, "many", "a", "b", "c")); err != nil {
			t.Fatal(err)
		}
		e.in(t).waitApps("a", "b", "c")
		e.in(t).eventually("three counted, one listed", func() string {
			if st := e.appset("many").Status; st.ResourcesCount != 3 || len(st.Resources) != 1 {
				return fmt.Sprintf("count %d, listed %d", st.ResourcesCount, len(st.Resources))
			}
			return ""
		})
	})

	t.Run("preserved labels and annotations", func(t *testing.T) {
		e := start(t, func(o *applicationset.Options) {
			o.PreservedLabels, o.PreservedAnnotations = []string{"team"}, []string{"owner"}
		})
		if err := e.client.Create(ctx, listAppSet(t, e.ns, "kept", "a")); err != nil {
			t.Fatal(err)
		}
		app := e.in(t).waitApps("a")["a"]
		app.Labels = map[string]string{"team": "web", "scratch": "x"}
		app.Annotations = map[string]string{"owner": "ops", "note": "y"}
		if err := e.client.Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		e.in(t).update("kept", func(as *v1alpha1.ApplicationSet) { as.Spec.Template.Labels = map[string]string{"generated": "yes"} })
		e.in(t).eventually("the template applied, the preserved metadata kept", func() string {
			got := e.apps()["a"]
			if got == nil || got.Labels["generated"] != "yes" {
				return "not updated yet"
			}
			if got.Labels["team"] != "web" || got.Annotations["owner"] != "ops" || got.Labels["scratch"] != "" || got.Annotations["note"] != "" {
				return fmt.Sprintf("labels %v, annotations %v", got.Labels, got.Annotations)
			}
			return ""
		})
	})
	t.Run("the ApplicationSet's policy overrides the controller's", func(t *testing.T) {
		override := true
		e := start(t, func(o *applicationset.Options) {
			o.Policy, o.PolicyOverride = v1alpha1.ApplicationsSyncPolicyCreateOnly, &override
		})
		as := listAppSet(t, e.ns, "own-policy", "a")
		sync := v1alpha1.ApplicationsSyncPolicySync
		as.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{ApplicationsSync: &sync}
		if err := e.client.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
		e.in(t).waitApps("a")
		e.in(t).update("own-policy", func(as *v1alpha1.ApplicationSet) { as.Spec.Template.Labels = map[string]string{"updated": "yes"} })
		e.in(t).eventually("the Application updated, as the ApplicationSet's sync policy allows", func() string {
			if got := e.apps()["a"]; got == nil || got.Labels["updated"] != "yes" {
				return "not updated"
			}
			return ""
		})
	})

	t.Run("generators that read outside state run again", func(t *testing.T) {
		e := start(t, func(o *applicationset.Options) { o.RequeueAfter = time.Second })
		remote := gitserver.NewLocalRepo(t)
		remote.Commit(t, "one", map[string]string{"apps/one/kustomization.yaml": "resources: []\n"})
		as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "polled", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				Git: &v1alpha1.GitGenerator{RepoURL: remote.URL, Revision: "main", Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "apps/*"}}}}}},
			Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{path.basename}}"},
				Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "{{path}}", TargetRevision: "main"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"}}},
		}}
		if err := e.client.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
		e.in(t).waitApps("one")
		// No refresh is asked for: the controller-wide requeue finds it.
		remote.Commit(t, "two", map[string]string{"apps/two/kustomization.yaml": "resources: []\n"})
		e.in(t).waitApps("one", "two")
	})
}
