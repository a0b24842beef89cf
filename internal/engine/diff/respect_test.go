package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/live"
)

func fromYAML(t testing.TB, y string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestKeepIgnored(t *testing.T) {
	const desired = `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web},
  spec: {replicas: 2, template: {spec: {containers: [{name: web, image: "web:1"}, {name: side, image: "side:1"}]}}}}`
	const live = `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, annotations: {scaled: "yes"}},
  spec: {replicas: 5, template: {spec: {containers: [{name: web, image: "web:0"}, {name: side, image: "side:0"}]}}}}`
	for _, tc := range []struct {
		name string
		rule v1alpha1.ResourceIgnoreDifferences
		live string
		want string
	}{
		{"no rule for the kind", v1alpha1.ResourceIgnoreDifferences{Kind: "Service", JSONPointers: []string{"/spec/replicas"}}, live,
			`{"replicas":2,"web":"web:1","side":"side:1","ann":null}`},
		{"a pointer takes the live value", v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}, live,
			`{"replicas":5,"web":"web:1","side":"side:1","ann":null}`},
		{"a field only live has is added", v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/metadata/annotations/scaled"}}, live,
			`{"replicas":2,"web":"web:1","side":"side:1","ann":"yes"}`},
		{"a jq path takes each live value", v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment",
			JQPathExpressions: []string{`.spec.template.spec.containers[] | select(.name == "side") | .image`}}, live,
			`{"replicas":2,"web":"web:1","side":"side:0","ann":null}`},
		{"a field live lacks is left out", v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}},
			`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {template: {spec: {containers: [{name: web, image: "web:0"}]}}}}`,
			`{"replicas":null,"web":"web:1","side":"side:1","ann":null}`},
		{"no live object: created as desired", v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}, "",
			`{"replicas":2,"web":"web:1","side":"side:1","ann":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fromYAML(t, desired)
			var l *unstructured.Unstructured
			if tc.live != "" {
				l = fromYAML(t, tc.live)
			}
			got, err := KeepIgnored(d, l, []v1alpha1.ResourceIgnoreDifferences{tc.rule}, 0)
			if err != nil {
				t.Fatal(err)
			}
			replicas, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "replicas")
			containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
			ann, _, _ := unstructured.NestedFieldNoCopy(got.Object, "metadata", "annotations", "scaled")
			summary, _ := json.Marshal(map[string]any{"replicas": replicas, "web": containers[0].(map[string]any)["image"], "side": containers[1].(map[string]any)["image"], "ann": ann})
			var a, b map[string]any
			_ = json.Unmarshal(summary, &a)
			_ = json.Unmarshal([]byte(tc.want), &b)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("got %s, want %s", summary, tc.want)
			}
			if r, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "replicas"); fmt.Sprint(r) != "2" {
				t.Errorf("the desired object was changed: replicas %v", r)
			}
		})
	}
}

func ExampleDiffer_Diff() {
	mapper, _ := live.New(cluster.Config, live.Options{})
	defer mapper.Stop()
	differ := New(dynamic.NewForConfigOrDie(cluster.Config), mapper, Options{})

	desired := &unstructured.Unstructured{}
	_ = yaml.Unmarshal([]byte("{apiVersion: v1, kind: ConfigMap, metadata: {name: example-diff, namespace: default}, data: {v: one}}"), &desired.Object)
	res, err := differ.Diff(context.Background(), desired, nil, nil, ServerSide) // nil: it does not exist yet
	if err != nil {
		panic(err)
	}
	v, _, _ := unstructured.NestedString(res.Predicted.Object, "data", "v")
	fmt.Println(res.Modified, v)
	// Output: true one
}
