package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t testing.TB, y string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// listed is the actions offered, disabled ones starred.
func listed(list []Action) string {
	var names []string
	for _, a := range list {
		n := a.Name
		if a.Disabled {
			n += "*"
		}
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

func TestBuiltinActions(t *testing.T) {
	ctx := context.Background()
	set, err := NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	deploy := "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 1, template: {metadata: {labels: {app: web}}}}}"
	running := "{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly, namespace: shop, uid: u1}, spec: {schedule: '@daily', jobTemplate: {metadata: {labels: {job: nightly}}, spec: {template: {spec: {restartPolicy: Never}}}}}}"
	paused := "{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly}, spec: {suspend: true, jobTemplate: {spec: {}}}}"
	for _, tc := range []struct {
		obj, action string
		params      map[string]string
		list        string
		check       func(Result) string
		want        string // what check reads, or the error
	}{
		{deploy, "restart", nil, "pause restart resume* scale", func(r Result) string {
			v, _, _ := unstructured.NestedString(r.Modified.Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
			return fmt.Sprint(len(v) == len("2006-01-02T15:04:05Z"))
		}, "true"},
		{deploy, "scale", map[string]string{"replicas": "4"}, "pause restart resume* scale", func(r Result) string {
			v, _, _ := unstructured.NestedInt64(r.Modified.Object, "spec", "replicas")
			return fmt.Sprint(v)
		}, "4"},
		{deploy, "scale", map[string]string{"replicas": "many"}, "pause restart resume* scale", nil, "invalid number: many"},
		{running, "suspend", nil, "create-job suspend", func(r Result) string {
			v, _, _ := unstructured.NestedBool(r.Modified.Object, "spec", "suspend")
			return fmt.Sprint(v)
		}, "true"},
		{paused, "resume", nil, "create-job resume", func(r Result) string {
			v, _, _ := unstructured.NestedBool(r.Modified.Object, "spec", "suspend")
			return fmt.Sprint(v)
		}, "false"},
		{running, "create-job", nil, "create-job suspend", func(r Result) string {
			j := r.Created[0]
			return fmt.Sprint(j.GetKind(), " ", j.GetNamespace(), " ", strings.HasPrefix(j.GetName(), "nightly-"), " ", j.GetLabels()["job"], " ",
				j.GetOwnerReferences()[0].Name, " ", j.GetAnnotations()["cronjob.kubernetes.io/instantiate"])
		}, "Job shop true nightly nightly manual"},
		{"{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}", "restart", nil, "", nil, "action restart is not available for ConfigMap"},
	} {
		o := obj(t, tc.obj)
		list, err := set.For(ctx, o)
		if got := listed(list); err != nil || got != tc.list {
			t.Errorf("%s: actions %q, %v; want %q", o.GetKind(), got, err, tc.list)
		}
		res, err := set.Run(ctx, o, tc.action, tc.params)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = tc.check(res)
		}
		if !strings.HasSuffix(got, tc.want) {
			t.Errorf("%s %s: %q, want %q", o.GetKind(), tc.action, got, tc.want)
		}
	}
	var unknown ErrUnknown
	if _, err := set.Run(ctx, obj(t, deploy), "explode", nil); !errors.As(err, &unknown) {
		t.Errorf("an unknown action: %v", err)
	}
}

func TestActionOfPath(t *testing.T) {
	for p, want := range map[string]string{
		"apps/Deployment/actions/discovery.lua":         "apps/Deployment|",
		"apps/Deployment/actions/scale/action.lua":      "apps/Deployment|scale",
		"Pod/actions/evict/action.lua":                  "Pod|evict",
		"apps/Deployment/health.lua":                    "!",
		"apps/Deployment/actions/testdata/x/action.lua": "!",
		"apps/Deployment/actions/action.lua":            "!",
	} {
		dir, name, ok := actionOfPath(p)
		got := dir + "|" + name
		if !ok {
			got = "!"
		}
		if got != want {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
	if gk := groupKindOfDir("Pod"); gk.Group != "" || gk.Kind != "Pod" {
		t.Errorf("a core kind's directory: %v", gk)
	}
}

func ExampleSet_Run() {
	ctx := context.Background()
	set, _ := NewSet(nil) // the built-in actions only
	deploy := &unstructured.Unstructured{}
	_ = yaml.Unmarshal([]byte("{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 1, template: {}}}"), &deploy.Object)
	list, _ := set.For(ctx, deploy)
	for _, a := range list {
		fmt.Println(a.Name, a.Disabled, a.Params)
	}
	res, _ := set.Run(ctx, deploy, "scale", map[string]string{"replicas": "3"})
	fmt.Println(res.Modified.Object["spec"].(map[string]any)["replicas"])
	// Output:
	// pause false []
	// restart false []
	// resume true []
	// scale false [{replicas}]
	// 3
}
