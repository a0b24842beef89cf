package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSet generates Applications from a template and the parameter
// sets its generators produce: one Application per parameter set.
//
// Unlike Application, status is a subresource, as in Argo CD's CRD: the
// controller writes it through /status and users cannot.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=applicationsets,shortName=appset;appsets
type ApplicationSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ApplicationSetSpec `json:"spec"`
	// +optional
	Status ApplicationSetStatus `json:"status,omitempty"`
}

// ApplicationSetList is a list of ApplicationSets.
//
// +kubebuilder:object:root=true
type ApplicationSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ApplicationSet `json:"items"`
}

// ApplicationSetSpec is what an ApplicationSet generates and how.
type ApplicationSetSpec struct {
	// GoTemplate renders the template with Go's text/template (and Sprig)
	// instead of the default {{param}} substitution.
	// +optional
	GoTemplate bool `json:"goTemplate,omitempty"`
	// Generators produce the parameter sets; their results are concatenated.
	Generators []ApplicationSetGenerator `json:"generators"`
	// Template is the Application each parameter set is rendered into.
	Template ApplicationSetTemplate `json:"template"`
	// SyncPolicy limits what the controller may do to generated Applications.
	// +optional
	SyncPolicy *ApplicationSetSyncPolicy `json:"syncPolicy,omitempty"`
	// Strategy orders the syncs of generated Applications (progressive sync).
	// +optional
	Strategy *ApplicationSetStrategy `json:"strategy,omitempty"`
	// PreservedFields are annotations and labels of generated Applications
	// that the controller leaves as it finds them.
	// +optional
	PreservedFields *ApplicationPreservedFields `json:"preservedFields,omitempty"`
	// GoTemplateOptions are text/template options, such as "missingkey=error".
	// +optional
	GoTemplateOptions []string `json:"goTemplateOptions,omitempty"`
	// ApplyNestedSelectors applies the selectors of generators nested in
	// matrix and merge generators. Argo CD 3 always applies them.
	// +optional
	ApplyNestedSelectors bool `json:"applyNestedSelectors,omitempty"`
	// IgnoreApplicationDifferences lists fields of generated Applications
	// the controller does not overwrite.
	// +optional
	IgnoreApplicationDifferences ApplicationSetIgnoreDifferences `json:"ignoreApplicationDifferences,omitempty"`
	// TemplatePatch is a templated strategic-merge patch (YAML or JSON)
	// applied to each rendered Application; goTemplate only.
	// +optional
	TemplatePatch *string `json:"templatePatch,omitempty"`
}

// ApplicationSetTemplate is an Application with templated strings.
type ApplicationSetTemplate struct {
	ApplicationSetTemplateMeta `json:"metadata"`
	Spec                       ApplicationSpec `json:"spec"`
}

// ApplicationSetTemplateMeta is the metadata a generated Application gets.
type ApplicationSetTemplateMeta struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Finalizers []string `json:"finalizers,omitempty"`
}

// ApplicationsSyncPolicy limits the changes the controller makes to
// generated Applications.
type ApplicationsSyncPolicy string

// The policies Argo CD names; empty means sync (all changes).
const (
	ApplicationsSyncPolicyCreateOnly   ApplicationsSyncPolicy = "create-only"
	ApplicationsSyncPolicyCreateUpdate ApplicationsSyncPolicy = "create-update"
	ApplicationsSyncPolicyCreateDelete ApplicationsSyncPolicy = "create-delete"
	ApplicationsSyncPolicySync         ApplicationsSyncPolicy = "sync"
)

// AllowUpdate reports whether existing Applications may be changed.
func (p ApplicationsSyncPolicy) AllowUpdate() bool {
	return p != ApplicationsSyncPolicyCreateOnly && p != ApplicationsSyncPolicyCreateDelete
}

// AllowDelete reports whether Applications no longer generated may be deleted.
func (p ApplicationsSyncPolicy) AllowDelete() bool {
	return p != ApplicationsSyncPolicyCreateOnly && p != ApplicationsSyncPolicyCreateUpdate
}

// ApplicationSetSyncPolicy is spec.syncPolicy of an ApplicationSet.
type ApplicationSetSyncPolicy struct {
	// PreserveResourcesOnDeletion keeps the generated Applications'
	// resources when the Applications are deleted (no cascade).
	// +optional
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	// ApplicationsSync is create-only, create-update, create-delete or sync
	// (the default). The controller's --policy flag can override it.
	// +optional
	ApplicationsSync *ApplicationsSyncPolicy `json:"applicationsSync,omitempty"`
}

// ApplicationSetStrategy is spec.strategy: AllAtOnce (the default) or RollingSync.
type ApplicationSetStrategy struct {
	// +optional
	Type string `json:"type,omitempty"`
	// +optional
	RollingSync *ApplicationSetRolloutStrategy `json:"rollingSync,omitempty"`
	// DeletionOrder is AllAtOnce (default) or Reverse (the steps in reverse).
	// +optional
	DeletionOrder string `json:"deletionOrder,omitempty"`
}

// ApplicationSetRolloutStrategy is the ordered steps of a RollingSync.
type ApplicationSetRolloutStrategy struct {
	// +optional
	Steps []ApplicationSetRolloutStep `json:"steps,omitempty"`
}

// ApplicationSetRolloutStep selects Applications by label and bounds how
// many of them sync at once.
type ApplicationSetRolloutStep struct {
	// +optional
	MatchExpressions []ApplicationMatchExpression `json:"matchExpressions,omitempty"`
	// +optional
	MaxUpdate *intstr.IntOrString `json:"maxUpdate,omitempty"`
}

// ApplicationMatchExpression is a label requirement of a rollout step.
type ApplicationMatchExpression struct {
	// +optional
	Key string `json:"key,omitempty"`
	// +optional
	Operator string `json:"operator,omitempty"`
	// +optional
	Values []string `json:"values,omitempty"`
}

// ApplicationPreservedFields names annotations and labels left alone.
type ApplicationPreservedFields struct {
	// +optional
	Annotations []string `json:"annotations,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// ApplicationSetResourceIgnoreDifferences names fields of generated
// Applications (all of them, or the one called Name) that are not overwritten.
type ApplicationSetResourceIgnoreDifferences struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// ApplicationSetIgnoreDifferences is spec.ignoreApplicationDifferences.
type ApplicationSetIgnoreDifferences []ApplicationSetResourceIgnoreDifferences

// ApplicationSetStatus is what the controller last did.
type ApplicationSetStatus struct {
	// +optional
	Conditions []ApplicationSetCondition `json:"conditions,omitempty"`
	// ApplicationStatus is each Application's progressive-sync state.
	// +optional
	ApplicationStatus []ApplicationSetApplicationStatus `json:"applicationStatus,omitempty"`
	// Resources are the generated Applications with their sync and health.
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
	// ResourcesCount is the number of generated Applications.
	// +optional
	ResourcesCount int64 `json:"resourcesCount,omitempty"`
	// Health summarises the generated Applications' health.
	// +optional
	Health *AppHealthStatus `json:"health,omitempty"`
}

// ApplicationSetConditionType is the type of an ApplicationSet condition.
type ApplicationSetConditionType string

// The condition types Argo CD sets.
const (
	ApplicationSetConditionErrorOccurred        ApplicationSetConditionType = "ErrorOccurred"
	ApplicationSetConditionParametersGenerated  ApplicationSetConditionType = "ParametersGenerated"
	ApplicationSetConditionResourcesUpToDate    ApplicationSetConditionType = "ResourcesUpToDate"
	ApplicationSetConditionRolloutProgressing   ApplicationSetConditionType = "RolloutProgressing"
	ApplicationSetConditionInvalidRolloutConfig ApplicationSetConditionType = "InvalidRolloutConfig"
)

// ApplicationSetConditionStatus is True, False or Unknown.
type ApplicationSetConditionStatus string

// The condition statuses.
const (
	ApplicationSetConditionStatusTrue    ApplicationSetConditionStatus = "True"
	ApplicationSetConditionStatusFalse   ApplicationSetConditionStatus = "False"
	ApplicationSetConditionStatusUnknown ApplicationSetConditionStatus = "Unknown"
)

// The reasons Argo CD gives on ApplicationSet conditions.
const (
	ApplicationSetReasonErrorOccurred                    = "ErrorOccurred"
	ApplicationSetReasonApplicationSetUpToDate           = "ApplicationSetUpToDate"
	ApplicationSetReasonParametersGenerated              = "ParametersGenerated"
	ApplicationSetReasonApplicationGenerated             = "ApplicationGeneratedSuccessfully"
	ApplicationSetReasonUpdateApplicationError           = "UpdateApplicationError"
	ApplicationSetReasonApplicationParamsGenerationError = "ApplicationGenerationFromParamsError"
	ApplicationSetReasonRenderTemplateParamsError        = "RenderTemplateParamsError"
	ApplicationSetReasonCreateApplicationError           = "CreateApplicationError"
	ApplicationSetReasonDeleteApplicationError           = "DeleteApplicationError"
	ApplicationSetReasonRefreshApplicationError          = "RefreshApplicationError"
	ApplicationSetReasonApplicationValidationError       = "ApplicationValidationError"
	ApplicationSetReasonApplicationSetModified           = "ApplicationSetModified"
	ApplicationSetReasonApplicationSetRolloutComplete    = "ApplicationSetRolloutComplete"
	ApplicationSetReasonSyncApplicationError             = "SyncApplicationError"
	ApplicationSetReasonApplicationSetRolloutError       = "ApplicationSetRolloutError"
	ApplicationSetReasonInvalidRolloutConfig             = "InvalidRolloutConfig"
	ApplicationSetReasonValidRolloutConfig               = "ValidRolloutConfig"
)

// ApplicationSetCondition is one condition of an ApplicationSet.
type ApplicationSetCondition struct {
	Type    ApplicationSetConditionType   `json:"type"`
	Message string                        `json:"message"`
	Status  ApplicationSetConditionStatus `json:"status"`
	Reason  string                        `json:"reason"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ApplicationSetApplicationStatus is one Application's place in a progressive sync.
type ApplicationSetApplicationStatus struct {
	Application string `json:"application"`
	Message     string `json:"message"`
	// Status is Waiting, Pending, Progressing or Healthy.
	Status string `json:"status"`
	// Step is the 1-based rollout step the Application belongs to.
	Step            string   `json:"step"`
	TargetRevisions []string `json:"targetRevisions"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}
