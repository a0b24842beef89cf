package health

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func convert[T any](obj *unstructured.Unstructured) (*T, error) {
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func healthy(msg string) Status { return Status{Status: v1alpha1.HealthStatusHealthy, Message: msg} }
func progressing(msg string) Status {
	return Status{Status: v1alpha1.HealthStatusProgressing, Message: msg}
}
func degraded(msg string) Status { return Status{Status: v1alpha1.HealthStatusDegraded, Message: msg} }
func suspended(msg string) Status {
	return Status{Status: v1alpha1.HealthStatusSuspended, Message: msg}
}

func deploymentHealth(obj *unstructured.Unstructured) (Status, error) {
	d, err := convert[appsv1.Deployment](obj)
	if err != nil {
		return Status{}, err
	}
	if d.Spec.Paused {
		return suspended("Deployment is paused"), nil
	}
	if d.Generation > d.Status.ObservedGeneration {
		return progressing("Waiting for rollout to finish: observed deployment generation less than desired generation"), nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return degraded(fmt.Sprintf("Deployment %q exceeded its progress deadline", d.Name)), nil
		}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	switch {
	case d.Status.UpdatedReplicas < want:
		return progressing(fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas have been updated...", d.Status.UpdatedReplicas, want)), nil
	case d.Status.Replicas > d.Status.UpdatedReplicas:
		return progressing(fmt.Sprintf("Waiting for rollout to finish: %d old replicas are pending termination...", d.Status.Replicas-d.Status.UpdatedReplicas)), nil
	case d.Status.AvailableReplicas < d.Status.UpdatedReplicas:
		return progressing(fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", d.Status.AvailableReplicas, d.Status.UpdatedReplicas)), nil
	}
	return healthy(""), nil
}

func statefulSetHealth(obj *unstructured.Unstructured) (Status, error) {
	s, err := convert[appsv1.StatefulSet](obj)
	if err != nil {
		return Status{}, err
	}
	if s.Status.ObservedGeneration == 0 || s.Generation > s.Status.ObservedGeneration {
		return progressing("Waiting for statefulset spec update to be observed..."), nil
	}
	want := int32(1)
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	if s.Status.ReadyReplicas < want {
		return progressing(fmt.Sprintf("Waiting for %d pods to be ready...", want-s.Status.ReadyReplicas)), nil
	}
	if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return healthy(fmt.Sprintf("statefulset has %d ready pods", s.Status.ReadyReplicas)), nil
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition > 0 {
		if s.Status.UpdatedReplicas < want-*ru.Partition {
			return progressing(fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", s.Status.UpdatedReplicas, want-*ru.Partition)), nil
		}
		return healthy(fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...", s.Status.UpdatedReplicas)), nil
	}
	if s.Status.UpdateRevision != s.Status.CurrentRevision {
		return progressing(fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...", s.Status.UpdatedReplicas, s.Status.UpdateRevision)), nil
	}
	return healthy(fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...", s.Status.CurrentReplicas, s.Status.CurrentRevision)), nil
}

func daemonSetHealth(obj *unstructured.Unstructured) (Status, error) {
	d, err := convert[appsv1.DaemonSet](obj)
	if err != nil {
		return Status{}, err
	}
	if d.Generation > d.Status.ObservedGeneration {
		return progressing("Waiting for rollout to finish: observed daemon set generation less than desired generation"), nil
	}
	if d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
		return healthy(fmt.Sprintf("daemon set %d out of %d new pods have been updated", d.Status.UpdatedNumberScheduled, d.Status.DesiredNumberScheduled)), nil
	}
	if d.Status.UpdatedNumberScheduled < d.Status.DesiredNumberScheduled {
		return progressing(fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", d.Name, d.Status.UpdatedNumberScheduled, d.Status.DesiredNumberScheduled)), nil
	}
	if d.Status.NumberAvailable < d.Status.DesiredNumberScheduled {
		return progressing(fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", d.Name, d.Status.NumberAvailable, d.Status.DesiredNumberScheduled)), nil
	}
	return healthy(""), nil
}

func replicaSetHealth(obj *unstructured.Unstructured) (Status, error) {
	r, err := convert[appsv1.ReplicaSet](obj)
	if err != nil {
		return Status{}, err
	}
	if r.Generation > r.Status.ObservedGeneration {
		return progressing("Waiting for rollout to finish: observed replica set generation less than desired generation"), nil
	}
	for _, c := range r.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			return degraded(c.Message), nil
		}
	}
	if r.Spec.Replicas != nil && r.Status.AvailableReplicas < *r.Spec.Replicas {
		return progressing(fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas are available...", r.Status.AvailableReplicas, *r.Spec.Replicas)), nil
	}
	return healthy(""), nil
}

// failingWait tells whether a container waits for a reason that will not
// pass without a change: an error (Err…, …Error) or a back-off (…BackOff).
func failingWait(w *corev1.ContainerStateWaiting) bool {
	return w != nil && (strings.HasPrefix(w.Reason, "Err") || strings.HasSuffix(w.Reason, "Error") || strings.HasSuffix(w.Reason, "BackOff"))
}

// podHealth judges a Pod as Argo CD does. One that is always restarted is
// Degraded while a container fails to start, or when it runs unready
// after a container has ended; one that runs to completion
// (OnFailure, Never) is Progressing while it runs.
func podHealth(obj *unstructured.Unstructured) (Status, error) {
	p, err := convert[corev1.Pod](obj)
	if err != nil {
		return Status{}, err
	}
	// Without a policy (not written back by an API server), Kubernetes'
	// default.
	policy := cmp.Or(p.Spec.RestartPolicy, corev1.RestartPolicyAlways)
	always := policy == corev1.RestartPolicyAlways
	if always {
		var waiting []string
		for _, cs := range p.Status.ContainerStatuses {
			if failingWait(cs.State.Waiting) {
				waiting = append(waiting, cs.State.Waiting.Message)
			}
		}
		if len(waiting) > 0 {
			return degraded(strings.Join(waiting, ", ")), nil
		}
	}
	switch p.Status.Phase {
	case corev1.PodPending:
		return progressing(p.Status.Message), nil
	case corev1.PodSucceeded:
		return healthy(p.Status.Message), nil
	case corev1.PodFailed:
		return degraded(podFailure(p)), nil
	case corev1.PodRunning:
		switch {
		case always && podReady(p):
			return healthy(p.Status.Message), nil
		case always && podRestarted(p):
			return degraded(p.Status.Message), nil
		case always, policy == corev1.RestartPolicyOnFailure, policy == corev1.RestartPolicyNever:
			return progressing(p.Status.Message), nil
		}
	}
	return Status{Status: v1alpha1.HealthStatusUnknown, Message: p.Status.Message}, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podRestarted tells whether a container of the Pod has ended before.
func podRestarted(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

// podFailure says why a failed Pod failed: its message, else the first
// container (init containers first) that ended with a message, out of
// memory or with an exit code.
func podFailure(p *corev1.Pod) string {
	if p.Status.Message != "" {
		return p.Status.Message
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		t := cs.State.Terminated
		switch {
		case t == nil:
		case t.Message != "":
			return t.Message
		case t.Reason == "OOMKilled":
			return t.Reason
		case t.ExitCode != 0:
			return fmt.Sprintf("container %q failed with exit code %d", cs.Name, t.ExitCode)
		}
	}
	return ""
}

func hasLoadBalancerIngress(obj *unstructured.Unstructured) bool {
	ing, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	return len(ing) > 0
}

func serviceHealth(obj *unstructured.Unstructured) (Status, error) {
	if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t == string(corev1.ServiceTypeLoadBalancer) && !hasLoadBalancerIngress(obj) {
		return progressing("Waiting for the load balancer to be provisioned"), nil
	}
	return healthy(""), nil
}

func ingressHealth(obj *unstructured.Unstructured) (Status, error) {
	if !hasLoadBalancerIngress(obj) {
		return progressing("Waiting for the ingress to get an address"), nil
	}
	return healthy(""), nil
}

func pvcHealth(obj *unstructured.Unstructured) (Status, error) {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	switch corev1.PersistentVolumeClaimPhase(phase) {
	case corev1.ClaimBound:
		return healthy(""), nil
	case corev1.ClaimPending:
		return progressing("Waiting for the volume to be bound"), nil
	case corev1.ClaimLost:
		return degraded("The bound volume is lost"), nil
	}
	return Status{Status: v1alpha1.HealthStatusUnknown}, nil
}

func jobHealth(obj *unstructured.Unstructured) (Status, error) {
	j, err := convert[batchv1.Job](obj)
	if err != nil {
		return Status{}, err
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			return degraded(c.Message), nil
		case batchv1.JobComplete:
			return healthy(c.Message), nil
		case batchv1.JobSuspended:
			return suspended(c.Message), nil
		}
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return suspended("Job is suspended"), nil
	}
	return progressing(fmt.Sprintf("Job is running: %d active", j.Status.Active)), nil
}

// hpaCondition is an autoscaler's condition, from its status or, for
// autoscaling/v1, from the annotation that version keeps them in.
type hpaCondition struct {
	Type, Status, Reason, Message string
}

// hpaFailures are the conditions (type and reason) of an autoscaler that
// cannot scale.
var hpaFailures = map[[2]string]bool{
	{"AbleToScale", "FailedGetScale"}: true, {"AbleToScale", "FailedUpdateScale"}: true,
	{"ScalingActive", "FailedGetResourceMetric"}: true, {"ScalingActive", "InvalidSelector"}: true,
}

// hpaHealth reads an autoscaler's conditions in order: the first that
// says it cannot scale makes it Degraded, the first that says it can
// (AbleToScale or ScalingLimited true) Healthy; with neither it is still
// waiting to autoscale.
func hpaHealth(obj *unstructured.Unstructured) (Status, error) {
	var conds []hpaCondition
	if obj.GroupVersionKind().Version == "v1" {
		if a, ok := obj.GetAnnotations()["autoscaling.alpha.kubernetes.io/conditions"]; ok {
			if err := json.Unmarshal([]byte(a), &conds); err != nil {
				return Status{}, fmt.Errorf("the autoscaler's conditions annotation: %w", err)
			}
		}
	} else {
		raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range raw {
			m, _ := c.(map[string]any)
			str := func(k string) string { v, _ := m[k].(string); return v }
			conds = append(conds, hpaCondition{Type: str("type"), Status: str("status"), Reason: str("reason"), Message: str("message")})
		}
	}
	for _, c := range conds {
		if hpaFailures[[2]string{c.Type, c.Reason}] {
			return degraded(c.Message), nil
		}
		if (c.Type == "AbleToScale" || c.Type == "ScalingLimited") && c.Status == "True" {
			return healthy(c.Message), nil
		}
	}
	return progressing("Waiting to Autoscale"), nil
}

func apiServiceHealth(obj *unstructured.Unstructured) (Status, error) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			msg, _ := m["message"].(string)
			if m["status"] == "True" {
				return healthy(msg), nil
			}
			return progressing(msg), nil
		}
	}
	return progressing("Waiting to be available"), nil
}

func namespaceHealth(obj *unstructured.Unstructured) (Status, error) {
	if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase == string(corev1.NamespaceTerminating) {
		return progressing("Namespace is terminating"), nil
	}
	return healthy(""), nil
}

// applicationHealth is a child Application's own health (app of apps).
func applicationHealth(obj *unstructured.Unstructured) (Status, error) {
	code, _, _ := unstructured.NestedString(obj.Object, "status", "health", "status")
	msg, _, _ := unstructured.NestedString(obj.Object, "status", "health", "message")
	if code == "" {
		return Status{Status: v1alpha1.HealthStatusUnknown, Message: msg}, nil
	}
	return Status{Status: v1alpha1.HealthStatusCode(code), Message: msg}, nil
}
