package applicationset

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func TestRenderString(t *testing.T) {
	flat := renderer{}
	goTmpl := renderer{goTemplate: true}
	strict := renderer{goTemplate: true, options: []string{"missingkey=error"}}
	params := Params{"cluster": "Prod_EU", "metadata": map[string]any{"labels": map[string]any{"env": "prod"}}}
	for _, tc := range []struct {
		name    string
		r       renderer
		in      string
		want    string
		wantErr string
	}{
		{"flat", flat, "{{cluster}}-app", "Prod_EU-app", ""},
		{"flat spaces", flat, "{{ cluster }}", "Prod_EU", ""},
		{"flat nested key", flat, "{{metadata.labels.env}}", "prod", ""},
		{"flat unknown kept", flat, "{{nope}}/{{cluster}}", "{{nope}}/Prod_EU", ""},
		{"go", goTmpl, "{{.cluster}}-{{.metadata.labels.env}}", "Prod_EU-prod", ""},
		{"go normalize", goTmpl, "{{normalize .cluster}}", "prod-eu", ""},
		{"go slugify", goTmpl, `{{slugify 8 false "Hello World Again"}}`, "hello-wo", ""},
		{"go sprig", goTmpl, `{{.cluster | lower | replace "_" "-"}}`, "prod-eu", ""},
		{"go no env", goTmpl, `{{env "HOME"}}`, "", `function "env" not defined`},
		{"go missing default", goTmpl, "{{.nope}}", "<no value>", ""},
		{"go missing error", strict, "{{.nope}}", "", `map has no entry for key "nope"`},
		{"no template", goTmpl, "plain", "plain", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f map[string]string
			if !tc.r.goTemplate {
				f = params.flatten()
			}
			got, err := tc.r.str(tc.in, params, f)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestNormalizeAndSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"Guestbook_App": "guestbook-app", "-a.b-": "a.b", strings.Repeat("x", 300): strings.Repeat("x", 253),
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := slugify(50, true, "Feature/ADD some Thing!"); got != "feature-add-some-thing" {
		t.Errorf("slugify = %q", got)
	}
	if got := slugify(12, true, "feature add something"); got != "feature-add" {
		t.Errorf("smart slugify = %q", got)
	}
}

func TestMergeTemplate(t *testing.T) {
	base := v1alpha1.ApplicationSetTemplate{
		ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{name}}", Labels: map[string]string{"a": "1"}},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/r", Path: "base", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "{{server}}", Namespace: "ns"}},
	}
	override := &v1alpha1.ApplicationSetTemplate{
		ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Labels: map[string]string{"b": "2"}},
		Spec:                       v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{Path: "overlay"}},
	}
	got, err := mergeTemplate(base, override)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "{{name}}" || got.Labels["a"] != "1" || got.Labels["b"] != "2" || got.Spec.Project != "default" ||
		got.Spec.Source.Path != "overlay" || got.Spec.Source.RepoURL != "https://git.example/r" || got.Spec.Destination.Server != "{{server}}" {
		t.Fatalf("merged = %+v", got)
	}
}

func TestDesired(t *testing.T) {
	as := &v1alpha1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: "argocd", UID: "u1"},
		Spec: v1alpha1.ApplicationSetSpec{
			GoTemplate: true,
			Template: v1alpha1.ApplicationSetTemplate{
				ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{.cluster}}-guestbook", Namespace: "elsewhere"},
				Spec:                       v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "{{.url}}"}},
			},
			TemplatePatch: new(`spec:
  source:
    repoURL: https://git.example/{{.cluster}}
    targetRevision: main
`),
		},
	}
	apps, err := Desired(as, []Result{{Template: &as.Spec.Template, Params: []Params{
		{"cluster": "a", "url": "https://a"}, {"cluster": "b", "url": "https://b"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(apps) != 2 {
		t.Fatalf("%d apps", len(apps))
	}
	a := apps[0]
	if a.Name != "a-guestbook" || a.Namespace != "argocd" || a.Spec.Destination.Server != "https://a" ||
		a.Spec.Source == nil || a.Spec.Source.RepoURL != "https://git.example/a" {
		t.Errorf("app = %+v", a)
	}
	if len(a.Finalizers) != 1 || a.Finalizers[0] != v1alpha1.ResourcesFinalizerName {
		t.Errorf("finalizers = %v", a.Finalizers)
	}
	if ref := controllerOf(a); ref == nil || ref.UID != "u1" || ref.Kind != "ApplicationSet" {
		t.Errorf("owner = %+v", a.OwnerReferences)
	}

	as.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{PreserveResourcesOnDeletion: true}
	apps, _ = Desired(as, []Result{{Template: &as.Spec.Template, Params: []Params{{"cluster": "a", "url": "u"}}}})
	if len(apps[0].Finalizers) != 0 {
		t.Errorf("preserveResourcesOnDeletion: finalizers = %v", apps[0].Finalizers)
	}

	_, err = Desired(as, []Result{{Template: &as.Spec.Template, Params: []Params{{"cluster": "a"}, {"cluster": "a"}}}})
	if err == nil || err.Error() != "ApplicationSet guestbook contains applications with duplicate name: a-guestbook" {
		t.Errorf("duplicate names: %v", err)
	}
}

func raw(t *testing.T, v any) apiextensionsv1.JSON {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return apiextensionsv1.JSON{Raw: data}
}

func listGen(t *testing.T, elems ...map[string]any) v1alpha1.ApplicationSetNestedGenerator {
	l := &v1alpha1.ListGenerator{}
	for _, e := range elems {
		l.Elements = append(l.Elements, raw(t, e))
	}
	return v1alpha1.ApplicationSetNestedGenerator{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{List: l}}
}

func TestMatrixAndMerge(t *testing.T) {
	g := &generation{r: renderer{}}
	// The second generator's elements use the first's parameters.
	got, err := g.matrix([]v1alpha1.ApplicationSetNestedGenerator{
		listGen(t, map[string]any{"env": "dev"}, map[string]any{"env": "prod"}),
		listGen(t, map[string]any{"app": "web-{{env}}"}),
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["app"] != "web-dev" || got[1]["app"] != "web-prod" || got[1]["env"] != "prod" {
		t.Fatalf("matrix = %v", got)
	}
	_, err = g.matrix([]v1alpha1.ApplicationSetNestedGenerator{listGen(t)}, 1)
	if err != errMatrixTooFew {
		t.Errorf("one generator: %v", err)
	}

	got, err = g.merge([]v1alpha1.ApplicationSetNestedGenerator{
		listGen(t, map[string]any{"cluster": "a", "replicas": "1"}, map[string]any{"cluster": "b", "replicas": "1"}),
		listGen(t, map[string]any{"cluster": "b", "replicas": "3"}, map[string]any{"cluster": "c", "replicas": "9"}),
	}, []string{"cluster"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["replicas"] != "1" || got[1]["replicas"] != "3" {
		t.Fatalf("merge = %v", got)
	}
	_, err = g.merge([]v1alpha1.ApplicationSetNestedGenerator{
		listGen(t, map[string]any{"cluster": "a"}, map[string]any{"cluster": "a"}), listGen(t),
	}, []string{"cluster"}, 1)
	if err == nil || !strings.Contains(err.Error(), "not unique") {
		t.Errorf("duplicate merge keys: %v", err)
	}
}

func TestSelectorAndPolicy(t *testing.T) {
	g := &generation{r: renderer{}}
	got, err := g.selectParams([]Params{{"env": "prod"}, {"env": "dev"}}, &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}})
	if err != nil || len(got) != 1 || got[0]["env"] != "prod" {
		t.Fatalf("selected %v, %v", got, err)
	}
	for _, tc := range []struct {
		p              v1alpha1.ApplicationsSyncPolicy
		update, delete bool
	}{
		{"", true, true}, {v1alpha1.ApplicationsSyncPolicySync, true, true},
		{v1alpha1.ApplicationsSyncPolicyCreateOnly, false, false},
		{v1alpha1.ApplicationsSyncPolicyCreateUpdate, true, false},
		{v1alpha1.ApplicationsSyncPolicyCreateDelete, false, true},
	} {
		if tc.p.AllowUpdate() != tc.update || tc.p.AllowDelete() != tc.delete {
			t.Errorf("%q: update %v delete %v", tc.p, tc.p.AllowUpdate(), tc.p.AllowDelete())
		}
	}
}
