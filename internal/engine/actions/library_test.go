package actions

import (
	"context"
	"encoding/json"
	"io/fs"
	"path"
	"reflect"
	"strings"
	"testing"

	argocdcustomizations "github.com/argoproj/argo-cd/v3/resource_customizations"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// actionCases is an action_test.yaml of Argo CD's module.
type actionCases struct {
	DiscoveryTests []struct {
		InputPath string   `json:"inputPath"`
		Result    []Action `json:"result"`
	} `json:"discoveryTests"`
	ActionTests []struct {
		Action               string            `json:"action"`
		InputPath            string            `json:"inputPath"`
		ExpectedOutputPath   string            `json:"expectedOutputPath"`
		ExpectedErrorMessage string            `json:"expectedErrorMessage"`
		Parameters           map[string]string `json:"parameters"`
	} `json:"actionTests"`
}

// TestArgoCDActionCases runs every case of the action_test.yaml files
// beside the actions of Argo CD's module through a Set without
// customizations, as the API server lists and runs actions: the actions
// listed for each input must be the ones the case lists, and each action
// must give the objects the case expects (or fail with its message).
// Times and generated names an action stamps are set to one value on
// both sides first, as Argo CD's own harness does.
func TestArgoCDActionCases(t *testing.T) {
	ctx := context.Background()
	set, err := NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	fsys := argocdcustomizations.Embedded
	files, _ := fs.Glob(fsys, "*/*/actions/action_test.yaml")
	core, _ := fs.Glob(fsys, "*/actions/action_test.yaml")
	files = append(files, core...)
	if len(files) < 30 {
		t.Fatalf("only %d action_test.yaml files in the module", len(files))
	}
	var total, equal int
	for _, file := range files {
		dir := path.Dir(file)
		var cases actionCases
		if err := yaml.Unmarshal(readFile(t, fsys, file), &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, c := range cases.DiscoveryTests {
			total++
			in := readObject(t, fsys, path.Join(dir, c.InputPath))
			got, err := set.For(ctx, in)
			want := append([]Action(nil), c.Result...)
			sortActions(want)
			if err == nil && reflect.DeepEqual(got, want) {
				equal++
				continue
			}
			t.Logf("%s discovery %s:\n got %+v, %v\nwant %+v", dir, c.InputPath, got, err, want)
		}
		for _, c := range cases.ActionTests {
			total++
			in := readObject(t, fsys, path.Join(dir, c.InputPath))
			res, err := set.Run(ctx, in, c.Action, c.Parameters)
			if c.ExpectedErrorMessage != "" {
				if err != nil && strings.HasSuffix(err.Error(), ": "+c.ExpectedErrorMessage) {
					equal++
				} else {
					t.Logf("%s %s on %s: %v, want the error %q", dir, c.Action, c.InputPath, err, c.ExpectedErrorMessage)
				}
				continue
			}
			if err != nil {
				t.Logf("%s %s on %s: %v", dir, c.Action, c.InputPath, err)
				continue
			}
			if diff := compareResult(t, in, res, readExpected(t, fsys, path.Join(dir, c.ExpectedOutputPath))); diff != "" {
				t.Logf("%s %s on %s: %s", dir, c.Action, c.InputPath, diff)
				continue
			}
			equal++
		}
	}
	scenarios, _ := fs.Glob(fsys, "*/*/actions/actions_test.yaml")
	for _, file := range scenarios {
		var cases struct {
			Tests []struct {
				Given map[string]any `json:"given"`
				When  struct {
					Action string `json:"action"`
				} `json:"when"`
				Expect map[string]any `json:"expect"`
			} `json:"tests"`
		}
		if err := yaml.Unmarshal(readFile(t, fsys, file), &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for i, c := range cases.Tests {
			total++
			res, err := set.Run(ctx, &unstructured.Unstructured{Object: c.Given}, c.When.Action, nil)
			if err == nil && res.Modified != nil && within(generic(t, c.Expect), generic(t, res.Modified.Object)) {
				equal++
				continue
			}
			t.Logf("%s case %d (%s): %+v, %v; want %v", file, i+1, c.When.Action, res.Modified, err, c.Expect)
		}
	}
	files = append(files, scenarios...)
	t.Logf("%d of %d cases of %d files equal", equal, total, len(files))
	if equal*100 < total*99 {
		t.Errorf("%d of %d Argo CD action cases equal, want at least 99%%", equal, total)
	}
}

// compareResult names the first difference between what an action made
// and the objects a case expects; "" when there is none.
func compareResult(t *testing.T, in *unstructured.Unstructured, res Result, expected []*unstructured.Unstructured) string {
	got := res.Created
	if res.Modified != nil {
		got = append([]*unstructured.Unstructured{res.Modified}, got...)
	}
	if len(got) != len(expected) {
		return "made " + jsonOf(t, got) + ", want " + jsonOf(t, expected)
	}
	for _, g := range got {
		w := matching(in, g, expected)
		if w == nil {
			return "made " + jsonOf(t, g) + ", which no expected object matches"
		}
		if generatedName(in, g) {
			g.SetName(w.GetName())
		}
		if !within(generic(t, stable(w)), generic(t, stable(g))) {
			return "\n got " + jsonOf(t, stable(g)) + "\nwant " + jsonOf(t, stable(w))
		}
	}
	return ""
}

// generatedName reports whether an action names what it creates after
// its source and the time (a Job of a CronJob, a Workflow of a template).
func generatedName(in, made *unstructured.Unstructured) bool {
	switch made.GetKind() {
	case "Job":
		return in.GetKind() == "CronJob"
	case "Workflow":
		return in.GetKind() == "CronWorkflow" || in.GetKind() == "WorkflowTemplate"
	}
	return false
}

// matching is the expected object of made's kind and name.
func matching(in, made *unstructured.Unstructured, expected []*unstructured.Unstructured) *unstructured.Unstructured {
	for _, e := range expected {
		if e.GroupVersionKind() != made.GroupVersionKind() || e.GetNamespace() != made.GetNamespace() {
			continue
		}
		if e.GetName() == made.GetName() || generatedName(in, made) && strings.HasPrefix(e.GetName(), in.GetName()) {
			return e
		}
	}
	return nil
}

// zeroTime is the one value times stamped by actions are given on both
// sides of a comparison.
const zeroTime = "0001-01-01T00:00:00Z"

// stable is a copy of obj with the fields actions stamp with the time
// set to one value: restartedAt of workloads' pod templates, Flux's
// requestedAt, External Secrets' force-sync, CloudNativePG's reload
// stamps, a Rollout's restartAt, a submitted Workflow's identity, a Job's
// FailureTarget time, and the status Argo CD's cases leave out.
func stable(obj *unstructured.Unstructured) *unstructured.Unstructured {
	u := obj.DeepCopy()
	gk := u.GroupVersionKind().GroupKind()
	annotate := func(values map[string]string, fields ...string) {
		_ = unstructured.SetNestedStringMap(u.Object, values, fields...)
	}
	switch {
	case gk.Group == "apps" && (gk.Kind == "Deployment" || gk.Kind == "StatefulSet" || gk.Kind == "DaemonSet"):
		annotate(map[string]string{"kubectl.kubernetes.io/restartedAt": zeroTime}, "spec", "template", "metadata", "annotations")
		if gk.Kind == "Deployment" {
			unstructured.RemoveNestedField(u.Object, "status")
			unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
			unstructured.RemoveNestedField(u.Object, "metadata", "generation")
		}
	case gk.Group == "batch" && gk.Kind == "Job":
		conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conditions {
			if m, ok := c.(map[string]any); ok && m["type"] == "FailureTarget" {
				m["lastTransitionTime"] = zeroTime
			}
		}
		if conditions != nil {
			_ = unstructured.SetNestedSlice(u.Object, conditions, "status", "conditions")
		}
	case gk.Group == "argoproj.io" && gk.Kind == "Rollout":
		unstructured.RemoveNestedField(u.Object, "spec", "restartAt")
	case gk.Group == "argoproj.io" && gk.Kind == "Workflow":
		unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
		unstructured.RemoveNestedField(u.Object, "metadata", "uid")
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations", "workflows.argoproj.io/scheduled-time")
	case gk.Group == "external-secrets.io":
		annotate(map[string]string{"force-sync": zeroTime}, "metadata", "annotations")
	case gk.Group == "postgresql.cnpg.io" && gk.Kind == "Cluster":
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["cnpg.io/reloadedAt"], a["kubectl.kubernetes.io/restartedAt"] = zeroTime, zeroTime
		u.SetAnnotations(a)
		unstructured.RemoveNestedField(u.Object, "status", "targetPrimaryTimestamp")
	case strings.HasSuffix(gk.Group, ".toolkit.fluxcd.io"):
		annotate(map[string]string{"reconcile.fluxcd.io/requestedAt": "By Argo CD at: 0001-01-01T00:00:00"}, "metadata", "annotations")
	}
	return u
}

func readFile(t *testing.T, fsys fs.FS, p string) []byte {
	t.Helper()
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readObject(t *testing.T, fsys fs.FS, p string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(readFile(t, fsys, p), &u.Object); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return u
}

// readExpected reads a case's expected output: one object, or a list of
// {k8sOperation, unstructuredObj}.
func readExpected(t *testing.T, fsys fs.FS, p string) []*unstructured.Unstructured {
	t.Helper()
	data := readFile(t, fsys, p)
	if !strings.HasPrefix(string(data), "-") {
		return []*unstructured.Unstructured{readObject(t, fsys, p)}
	}
	var list []struct {
		Object map[string]any `json:"unstructuredObj"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(list))
	for _, item := range list {
		out = append(out, &unstructured.Unstructured{Object: item.Object})
	}
	return out
}

// within reports whether every field of want is in got with its value,
// a null field of want being absent from got: what Argo CD's harness
// checks (it applies the expected object to the result as a patch and
// looks for a change). Lists must have the same length.
func within(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if v == nil {
				if g[k] != nil {
					return false
				}
				continue
			}
			if !within(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !within(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

// generic is v through JSON: maps, lists, float64 numbers.
func generic(t *testing.T, v any) any {
	var out any
	_ = json.Unmarshal([]byte(jsonOf(t, v)), &out)
	return out
}

// jsonOf is v as JSON, numbers and key order made comparable.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	_ = json.Unmarshal(data, &generic)
	data, _ = json.Marshal(generic)
	return string(data)
}
