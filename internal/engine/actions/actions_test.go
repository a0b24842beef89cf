package actions

import (
	"errors"
	"fmt"
	"testing"
	"time"

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

var now = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func TestActions(t *testing.T) {
	deploy := "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {template: {metadata: {labels: {app: web}}}}}"
	running := "{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly, namespace: shop, uid: u1}, spec: {schedule: '@daily', jobTemplate: {metadata: {labels: {job: nightly}}, spec: {template: {spec: {restartPolicy: Never}}}}}}"
	paused := "{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly}, spec: {suspend: true, jobTemplate: {spec: {}}}}"
	for _, tc := range []struct {
		obj, action string
		list        string // the actions offered, disabled ones starred
		check       func(Result) string
		err         bool
	}{
		{deploy, "restart", "[restart]", func(r Result) string {
			v, _, _ := unstructured.NestedString(r.Modified.Object, "spec", "template", "metadata", "annotations", restartedAt)
			return v
		}, false},
		{running, "suspend", "[create-job resume* suspend]", func(r Result) string {
			v, _, _ := unstructured.NestedBool(r.Modified.Object, "spec", "suspend")
			return fmt.Sprint(v)
		}, false},
		{paused, "resume", "[create-job resume suspend*]", func(r Result) string {
			v, _, _ := unstructured.NestedBool(r.Modified.Object, "spec", "suspend")
			return fmt.Sprint(v)
		}, false},
		{paused, "suspend", "[create-job resume suspend*]", nil, true},
		{running, "create-job", "[create-job resume* suspend]", func(r Result) string {
			j := r.Created[0]
			return fmt.Sprint(j.GetKind(), " ", j.GetNamespace(), "/", j.GetName(), " ", j.GetLabels()["job"], " ", j.GetOwnerReferences()[0].Name, " ", j.GetAnnotations()["cronjob.kubernetes.io/instantiate"])
		}, false},
		{"{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}", "restart", "[]", nil, true},
	} {
		o := obj(t, tc.obj)
		var names []string
		for _, a := range For(o) {
			n := a.Name
			if a.Disabled {
				n += "*"
			}
			names = append(names, n)
		}
		if got := fmt.Sprint(names); got != tc.list && !(tc.list == "[]" && len(names) == 0) {
			t.Errorf("%s: actions %s, want %s", o.GetKind(), got, tc.list)
		}
		res, err := Run(o, tc.action, now)
		if (err != nil) != tc.err {
			t.Errorf("%s %s: %v", o.GetKind(), tc.action, err)
			continue
		}
		if err != nil {
			continue
		}
		want := map[string]string{"restart": "2026-11-23T10:00:00Z", "suspend": "true", "resume": "false",
			"create-job": "Job shop/nightly-1795428000 nightly nightly manual"}[tc.action]
		if got := tc.check(res); got != want {
			t.Errorf("%s %s: %q, want %q", o.GetKind(), tc.action, got, want)
		}
	}
	var unknown ErrUnknown
	if _, err := Run(obj(t, deploy), "explode", now); !errors.As(err, &unknown) {
		t.Errorf("an unknown action: %v", err)
	}
}

func ExampleRun() {
	deploy := &unstructured.Unstructured{}
	_ = yaml.Unmarshal([]byte("{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {template: {}}}"), &deploy.Object)
	fmt.Println(For(deploy)[0].Name)
	res, _ := Run(deploy, "restart", time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	annotations, _, _ := unstructured.NestedStringMap(res.Modified.Object, "spec", "template", "metadata", "annotations")
	fmt.Println(annotations["kubectl.kubernetes.io/restartedAt"])
	// Output:
	// restart
	// 2026-11-23T10:00:00Z
}
