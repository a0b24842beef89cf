// Package actions holds the resource actions Argo CD offers on the
// built-in kinds (restart a Deployment, StatefulSet or DaemonSet; suspend
// and resume a CronJob or Job; create a Job from a CronJob) and runs
// argocd-cm's Lua actions (resource.customizations.actions.<group_kind>).
// An action computes the change from the live object; applying it is the
// caller's.
//
//	set, err := actions.NewSet(cm.Data)
//	list, err := set.For(ctx, obj)                                  // each a.Name, a.Disabled
//	res, err := set.Run(ctx, obj, "restart", params, time.Now())    // res.Modified, res.Created
package actions

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Action is an action offered on an object, as Argo CD's API lists it.
type Action struct {
	Name     string `json:"name"`
	Disabled bool   `json:"disabled"`
	// IconClass is the web UI's icon (Font Awesome classes, as Argo CD's).
	IconClass   string `json:"iconClass,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
}

// Result is what running an action changes.
type Result struct {
	// Modified is the object changed, to be written back; nil when the
	// action only creates objects.
	Modified *unstructured.Unstructured
	// Created are new objects to create (create-job's Job).
	Created []*unstructured.Unstructured
}

// ErrUnknown is an action a kind does not have.
type ErrUnknown struct {
	Action string
	Kind   string
}

func (e ErrUnknown) Error() string {
	return fmt.Sprintf("action %s is not available for %s", e.Action, e.Kind)
}

// action is one built-in action of a kind.
type action struct {
	name, icon, display string
	// disabled reports whether the action does not apply to obj now.
	disabled func(obj *unstructured.Unstructured) bool
	run      func(obj *unstructured.Unstructured, now time.Time) (Result, error)
}

var (
	restart = action{name: "restart", icon: "fa fa-fw fa-redo", display: "Restart", run: restartPods}
	suspend = action{name: "suspend", icon: "fa fa-fw fa-pause-circle", display: "Suspend",
		disabled: func(obj *unstructured.Unstructured) bool { return suspended(obj) }, run: setSuspend(true)}
	resume = action{name: "resume", icon: "fa fa-fw fa-play-circle", display: "Resume",
		disabled: func(obj *unstructured.Unstructured) bool { return !suspended(obj) }, run: setSuspend(false)}
	createJob = action{name: "create-job", icon: "fa fa-fw fa-plus", display: "Create Job", run: jobFromCronJob}
)

// builtin are the actions of each kind, in the order they are listed.
var builtin = map[schema.GroupKind][]action{
	{Group: "apps", Kind: "Deployment"}:  {restart},
	{Group: "apps", Kind: "StatefulSet"}: {restart},
	{Group: "apps", Kind: "DaemonSet"}:   {restart},
	{Group: "batch", Kind: "CronJob"}:    {createJob, resume, suspend},
	{Group: "batch", Kind: "Job"}:        {resume, suspend},
}

// For lists the actions of an object's kind; none for other kinds.
func For(obj *unstructured.Unstructured) []Action {
	var out []Action
	for _, a := range builtin[obj.GroupVersionKind().GroupKind()] {
		out = append(out, Action{Name: a.name, IconClass: a.icon, DisplayName: a.display, Disabled: a.disabled != nil && a.disabled(obj)})
	}
	return out
}

// Run runs the named action on a copy of obj; now stamps what it records.
func Run(obj *unstructured.Unstructured, name string, now time.Time) (Result, error) {
	for _, a := range builtin[obj.GroupVersionKind().GroupKind()] {
		if a.name != name {
			continue
		}
		if a.disabled != nil && a.disabled(obj) {
			return Result{}, fmt.Errorf("action %s is disabled for %s/%s", name, obj.GetKind(), obj.GetName())
		}
		return a.run(obj.DeepCopy(), now)
	}
	return Result{}, ErrUnknown{Action: name, Kind: obj.GetKind()}
}

// restartedAt is the annotation kubectl rollout restart sets on a pod
// template; a new value rolls the pods.
const restartedAt = "kubectl.kubernetes.io/restartedAt"

func restartPods(obj *unstructured.Unstructured, now time.Time) (Result, error) {
	err := unstructured.SetNestedField(obj.Object, now.UTC().Format(time.RFC3339), "spec", "template", "metadata", "annotations", restartedAt)
	if err != nil {
		return Result{}, fmt.Errorf("restarting %s/%s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return Result{Modified: obj}, nil
}

func suspended(obj *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
	return v
}

func setSuspend(v bool) func(*unstructured.Unstructured, time.Time) (Result, error) {
	return func(obj *unstructured.Unstructured, _ time.Time) (Result, error) {
		if err := unstructured.SetNestedField(obj.Object, v, "spec", "suspend"); err != nil {
			return Result{}, err
		}
		return Result{Modified: obj}, nil
	}
}

// jobFromCronJob creates a Job from a CronJob's template, owned by it and
// marked as started by hand, as kubectl create job --from does.
func jobFromCronJob(cj *unstructured.Unstructured, now time.Time) (Result, error) {
	tmpl, found, err := unstructured.NestedMap(cj.Object, "spec", "jobTemplate")
	if err != nil || !found {
		return Result{}, fmt.Errorf("CronJob/%s has no job template", cj.GetName())
	}
	job := &unstructured.Unstructured{Object: map[string]any{}}
	job.SetAPIVersion("batch/v1")
	job.SetKind("Job")
	name := fmt.Sprintf("%s-%d", cj.GetName(), now.Unix())
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	job.SetName(name)
	job.SetNamespace(cj.GetNamespace())
	if labels, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "labels"); len(labels) > 0 {
		job.SetLabels(labels)
	}
	job.SetAnnotations(map[string]string{"cronjob.kubernetes.io/instantiate": "manual"})
	job.Object["spec"] = tmpl["spec"]
	truth := true
	job.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: cj.GetAPIVersion(), Kind: cj.GetKind(), Name: cj.GetName(), UID: cj.GetUID(),
		BlockOwnerDeletion: &truth}})
	return Result{Created: []*unstructured.Unstructured{job}}, nil
}
