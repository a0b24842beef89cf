package health

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdKinds are health rules for widely used custom resources whose kinds
// each read their own way, written from each project's documented status:
// the kinds Argo CD's library (library.go) has no script for.
var crdKinds = map[schema.GroupKind]rule{
	{Group: "argoproj.io", Kind: "Workflow"}:            phaseHealth(phases{progressing: "Pending Running", healthy: "Succeeded", degraded: "Failed Error"}),
	{Group: "velero.io", Kind: "BackupStorageLocation"}: phaseHealth(phases{healthy: "Available", degraded: "Unavailable"}),
}

// crdGroups are health rules for the kinds of a group whose kinds report
// the same conditions and that Argo CD's library has no script for.
var crdGroups = map[string]rule{
	"cert-manager.io":                certManagerHealth,
	"external-secrets.io":            conditionsHealth,
	"generators.external-secrets.io": conditionsHealth,
	"keda.sh":                        kedaHealth,
	"kustomize.toolkit.fluxcd.io":    fluxHealth,
	"helm.toolkit.fluxcd.io":         fluxHealth,
	"source.toolkit.fluxcd.io":       fluxHealth,
	"notification.toolkit.fluxcd.io": fluxHealth,
	"image.toolkit.fluxcd.io":        fluxHealth,
	"serving.knative.dev":            conditionsHealth,
	"eventing.knative.dev":           conditionsHealth,
	"messaging.knative.dev":          conditionsHealth,
	"sources.knative.dev":            conditionsHealth,
	"kafka.strimzi.io":               conditionsHealth,
	"core.strimzi.io":                conditionsHealth,
	"cluster.x-k8s.io":               clusterAPIHealth,
	"networking.istio.io":            istioHealth,
	"security.istio.io":              istioHealth,
	"telemetry.istio.io":             istioHealth,
	"extensions.istio.io":            istioHealth,
}

// crdRule returns the rule for a custom resource's kind, if there is one.
func crdRule(gk schema.GroupKind) (rule, bool) {
	if r, ok := crdKinds[gk]; ok {
		return r, true
	}
	if r, ok := crdGroups[gk.Group]; ok {
		return r, true
	}
	return nil, false
}

// condition is one entry of status.conditions.
type condition struct {
	Type, Status, Reason, Message string
	// Severity is Cluster API's: Error, Warning or Info.
	Severity string
}

// conditionsOf reads status.conditions.
func conditionsOf(obj *unstructured.Unstructured) map[string]condition {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := map[string]condition{}
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := condition{}
		c.Type, _ = m["type"].(string)
		c.Status, _ = m["status"].(string)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		c.Severity, _ = m["severity"].(string)
		out[c.Type] = c
	}
	return out
}

// stale reports whether the controller has not yet seen the object's
// latest spec (status.observedGeneration behind metadata.generation).
func stale(obj *unstructured.Unstructured) bool {
	observed, found, err := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return err == nil && found && observed < obj.GetGeneration()
}

// progressReasons are Ready=False reasons that mean "not yet", not
// "failed".
var progressReasons = map[string]bool{"Progressing": true, "Reconciling": true, "Creating": true, "Pending": true,
	"Deleting": true, "DependencyNotReady": true, "ProgressingWithRetry": true, "Waiting": true, "Provisioning": true}

// conditionsHealth reads the conventions most operators follow: Stalled
// or Reconciling, then Ready (Healthy when True, Progressing while it is
// Unknown, missing, or False for a reason that means progress or with a
// severity below Error, Degraded otherwise), after the spec has been
// observed.
func conditionsHealth(obj *unstructured.Unstructured) (Status, error) {
	conds := conditionsOf(obj)
	if c, ok := conds["Stalled"]; ok && c.Status == "True" {
		return degraded(c.Message), nil
	}
	if stale(obj) {
		return progressing("Waiting for the spec to be observed"), nil
	}
	if c, ok := conds["Reconciling"]; ok && c.Status == "True" {
		return progressing(c.Message), nil
	}
	ready, ok := conds["Ready"]
	switch {
	case !ok || ready.Status == "Unknown":
		return progressing(cmpOr(ready.Message, "Waiting to become ready")), nil
	case ready.Status == "True":
		return healthy(ready.Message), nil
	case progressReasons[ready.Reason] || strings.HasPrefix(ready.Reason, "Waiting") || (ready.Severity != "" && ready.Severity != "Error"):
		return progressing(cmpOr(ready.Message, ready.Reason)), nil
	}
	return degraded(ready.Message), nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fluxHealth is conditionsHealth for Flux, whose objects stop being
// reconciled while spec.suspend is true.
func fluxHealth(obj *unstructured.Unstructured) (Status, error) {
	if s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); s {
		return suspended("Reconciliation is suspended"), nil
	}
	return conditionsHealth(obj)
}

// kedaHealth is conditionsHealth for KEDA, whose scaling stops while the
// autoscaling.keda.sh/paused annotations are set.
func kedaHealth(obj *unstructured.Unstructured) (Status, error) {
	a := obj.GetAnnotations()
	if a["autoscaling.keda.sh/paused"] == "true" || a["autoscaling.keda.sh/paused-replicas"] != "" {
		return suspended("Scaling is paused"), nil
	}
	return conditionsHealth(obj)
}

// certManagerHealth is conditionsHealth for cert-manager, where a
// Certificate being issued is progress even while Ready is False.
func certManagerHealth(obj *unstructured.Unstructured) (Status, error) {
	if c, ok := conditionsOf(obj)["Issuing"]; ok && c.Status == "True" {
		return progressing(cmpOr(c.Message, "Issuing the certificate")), nil
	}
	return conditionsHealth(obj)
}

// clusterAPIHealth reads Cluster API objects: paused ones are Suspended,
// a failed phase Degraded, otherwise their Ready condition.
func clusterAPIHealth(obj *unstructured.Unstructured) (Status, error) {
	if p, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); p {
		return suspended("Reconciliation is paused"), nil
	}
	if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase == "Failed" {
		msg, _, _ := unstructured.NestedString(obj.Object, "status", "failureMessage")
		return degraded(cmpOr(msg, "Failed")), nil
	}
	return conditionsHealth(obj)
}

// istioHealth reads Istio's configuration objects, which carry no health
// of their own: Degraded when Istio reports an error validating them.
func istioHealth(obj *unstructured.Unstructured) (Status, error) {
	msgs, _, _ := unstructured.NestedSlice(obj.Object, "status", "validationMessages")
	for _, m := range msgs {
		entry, _ := m.(map[string]any)
		level, _ := entry["level"].(string)
		if level == "ERROR" {
			code, _, _ := unstructured.NestedString(entry, "type", "code")
			name, _, _ := unstructured.NestedString(entry, "type", "name")
			return degraded(strings.TrimSpace(code + " " + name)), nil
		}
	}
	if c, ok := conditionsOf(obj)["Reconciled"]; ok && c.Status == "False" {
		return progressing(c.Message), nil
	}
	return healthy(""), nil
}

// phases lists, space-separated, the values of status.phase that mean
// each health; an unlisted phase (or none) is Progressing.
type phases struct{ progressing, healthy, degraded, suspended string }

// phaseHealth reads status.phase by p, with status.message as the reason.
func phaseHealth(p phases) rule {
	return func(obj *unstructured.Unstructured) (Status, error) {
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(obj.Object, "status", "message")
		msg = cmpOr(msg, phase)
		has := func(list string) bool { return phase != "" && strings.Contains(" "+list+" ", " "+phase+" ") }
		switch {
		case has(p.healthy):
			return healthy(msg), nil
		case has(p.degraded):
			return degraded(msg), nil
		case has(p.suspended):
			return suspended(msg), nil
		}
		return progressing(cmpOr(msg, "Waiting for a status")), nil
	}
}
