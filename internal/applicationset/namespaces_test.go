package applicationset_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
)

// TestApplicationSetInAnotherNamespace: an ApplicationSet outside the
// control namespace generates Applications in its own namespace only into
// a project whose sourceNamespaces take that namespace; otherwise it
// reports Argo CD's error and writes nothing.
func TestApplicationSetInAnotherNamespace(t *testing.T) {
	tenant := testCluster.NewNamespace(t)
	e := start(t, func(o *applicationset.Options) { o.Namespaces = []string{tenant} })
	ctx := context.Background()
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: tenant}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			List: &v1alpha1.ListGenerator{Elements: elements(t, map[string]any{"env": "dev"})}}}},
		Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "team-{{env}}"},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example/team.git", Path: "{{env}}"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{env}}"}}},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	tenantEnv := e.in(t)
	tenantEnv.ns = tenant
	tenantEnv.errorOf("team", "application 'team-dev' in namespace '"+tenant+"' is not permitted to use project 'default'")
	if n := len(tenantEnv.apps()); n != 0 {
		t.Fatalf("%d Applications written into a project that does not take the namespace", n)
	}
	if err := e.client.Create(ctx, &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: e.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos: []string{"*"}, SourceNamespaces: []string{tenant},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}}}); err != nil {
		t.Fatal(err)
	}
	tenantEnv.update("team", func(as *v1alpha1.ApplicationSet) { as.Spec.Template.Spec.Project = "team" })
	tenantEnv.waitApps("team-dev")
}
