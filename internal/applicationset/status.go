package applicationset

import (
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Argo CD's condition messages on success.
const (
	msgParametersGenerated = "Successfully generated parameters for all Applications"
	msgUpToDate            = "All applications have been generated successfully"
)

// outcome is what one reconcile found, for the status.
type outcome struct {
	// generateErr failed the generators or the template; nothing was applied.
	generateErr error
	// applyErr is the first error creating, updating, validating or
	// deleting an Application, with its reason.
	applyErr    error
	applyReason string
	// rollout, for a RollingSync, is this reconcile's progressive sync.
	rollout *rollout
}

// conditions returns Argo CD's three conditions for an outcome.
func (o outcome) conditions() []v1alpha1.ApplicationSetCondition {
	out := o.base()
	if o.rollout == nil {
		return out
	}
	for _, c := range o.rollout.conditions() {
		i := slices.IndexFunc(out, func(b v1alpha1.ApplicationSetCondition) bool { return b.Type == c.Type })
		if i < 0 {
			out = append(out, c)
		} else if out[i].Status != v1alpha1.ApplicationSetConditionStatusTrue {
			out[i] = c // an error already reported stays
		}
	}
	return out
}

// base is Argo CD's three conditions for the generation and the writes.
func (o outcome) base() []v1alpha1.ApplicationSetCondition {
	t, f := v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetConditionStatusFalse
	switch {
	case o.generateErr != nil:
		msg := o.generateErr.Error()
		return []v1alpha1.ApplicationSetCondition{
			{Type: v1alpha1.ApplicationSetConditionErrorOccurred, Status: t, Reason: v1alpha1.ApplicationSetReasonApplicationParamsGenerationError, Message: msg},
			{Type: v1alpha1.ApplicationSetConditionParametersGenerated, Status: f, Reason: v1alpha1.ApplicationSetReasonErrorOccurred, Message: msg},
			{Type: v1alpha1.ApplicationSetConditionResourcesUpToDate, Status: f, Reason: v1alpha1.ApplicationSetReasonApplicationParamsGenerationError, Message: msg},
		}
	case o.applyErr != nil:
		msg := o.applyErr.Error()
		return []v1alpha1.ApplicationSetCondition{
			{Type: v1alpha1.ApplicationSetConditionErrorOccurred, Status: t, Reason: o.applyReason, Message: msg},
			{Type: v1alpha1.ApplicationSetConditionParametersGenerated, Status: t, Reason: v1alpha1.ApplicationSetReasonParametersGenerated, Message: msgParametersGenerated},
			{Type: v1alpha1.ApplicationSetConditionResourcesUpToDate, Status: f, Reason: v1alpha1.ApplicationSetReasonErrorOccurred, Message: msg},
		}
	}
	return []v1alpha1.ApplicationSetCondition{
		{Type: v1alpha1.ApplicationSetConditionErrorOccurred, Status: f, Reason: v1alpha1.ApplicationSetReasonApplicationSetUpToDate, Message: msgUpToDate},
		{Type: v1alpha1.ApplicationSetConditionParametersGenerated, Status: t, Reason: v1alpha1.ApplicationSetReasonParametersGenerated, Message: msgParametersGenerated},
		{Type: v1alpha1.ApplicationSetConditionResourcesUpToDate, Status: t, Reason: v1alpha1.ApplicationSetReasonApplicationSetUpToDate, Message: msgUpToDate},
	}
}

// mergeConditions sets the new conditions, keeping each one's transition
// time while its status stays the same, and any other condition types.
func mergeConditions(old, next []v1alpha1.ApplicationSetCondition, now time.Time) []v1alpha1.ApplicationSetCondition {
	byType := map[v1alpha1.ApplicationSetConditionType]v1alpha1.ApplicationSetCondition{}
	for _, c := range old {
		byType[c.Type] = c
	}
	for _, c := range next {
		prev, ok := byType[c.Type]
		if ok && prev.Status == c.Status && prev.LastTransitionTime != nil {
			c.LastTransitionTime = prev.LastTransitionTime
		} else {
			c.LastTransitionTime = &metav1.Time{Time: now}
		}
		byType[c.Type] = c
	}
	out := make([]v1alpha1.ApplicationSetCondition, 0, len(byType))
	for _, c := range byType {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// resources lists the generated Applications with their sync and health,
// by name, at most limit of them (0: all).
func resources(apps []*v1alpha1.Application, limit int) []v1alpha1.ResourceStatus {
	sort.Slice(apps, func(i, j int) bool { return apps[i].Name < apps[j].Name })
	var out []v1alpha1.ResourceStatus
	for _, app := range apps {
		if limit > 0 && len(out) == limit {
			break
		}
		rs := v1alpha1.ResourceStatus{
			Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.ApplicationKind,
			Namespace: app.Namespace, Name: app.Name, Status: app.Status.Sync.Status,
		}
		if h := app.Status.Health; h.Status != "" {
			rs.Health = &v1alpha1.HealthStatus{Status: h.Status, Message: h.Message, LastTransitionTime: h.LastTransitionTime}
		}
		out = append(out, rs)
	}
	return out
}
