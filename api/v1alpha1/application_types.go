package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Application is a group of Kubernetes resources, declared in a source, that
// Capstan keeps in sync with a destination cluster and namespace.
//
// As in Argo CD, status is not a subresource: the controller records an
// operation's result and clears the operation in one write, and Argo CD's
// own CRD definitions work unchanged.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=applications,shortName=app;apps,categories=argoproj
// +kubebuilder:printcolumn:name="Sync Status",type=string,JSONPath=`.status.sync.status`
// +kubebuilder:printcolumn:name="Health Status",type=string,JSONPath=`.status.health.status`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.sync.revision`,priority=10
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.project`,priority=10
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ApplicationSpec `json:"spec"`
	// +optional
	Status ApplicationStatus `json:"status,omitempty"`
	// Operation is a requested operation, such as a sync. The controller
	// carries it out and clears it; its progress is in status.operationState.
	// +optional
	Operation *Operation `json:"operation,omitempty"`
}

// ApplicationList is a list of Applications.
//
// +kubebuilder:object:root=true
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Application `json:"items"`
}

// ApplicationSpec is the desired state of an Application.
type ApplicationSpec struct {
	// Source is the single source of the Application. Mutually exclusive with Sources.
	// +optional
	Source *ApplicationSource `json:"source,omitempty"`
	// Destination is the cluster and namespace to deploy to.
	Destination ApplicationDestination `json:"destination"`
	// Project is the AppProject the Application belongs to; "default" if unsure.
	Project string `json:"project"`
	// SyncPolicy controls when and how a sync happens.
	// +optional
	SyncPolicy *SyncPolicy `json:"syncPolicy,omitempty"`
	// IgnoreDifferences lists fields to leave out of the comparison.
	// +optional
	IgnoreDifferences IgnoreDifferences `json:"ignoreDifferences,omitempty"`
	// Info is extra information shown with the Application.
	// +optional
	Info []Info `json:"info,omitempty"`
	// RevisionHistoryLimit is how many entries status.history keeps. Default 10.
	// +optional
	RevisionHistoryLimit *int64 `json:"revisionHistoryLimit,omitempty"`
	// Sources are the sources of a multi-source Application. Mutually exclusive with Source.
	// +optional
	Sources ApplicationSources `json:"sources,omitempty"`
	// SourceHydrator renders a dry source and syncs from the branch the
	// rendered manifests are pushed to. Mutually exclusive with Source and Sources.
	// +optional
	SourceHydrator *SourceHydrator `json:"sourceHydrator,omitempty"`
}

// ApplicationDestination is a cluster, by server URL or by name, and a namespace.
type ApplicationDestination struct {
	// Server is the cluster's API server URL.
	// +optional
	Server string `json:"server,omitempty"`
	// Namespace is the namespace for namespaced resources that set none.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the cluster's name, an alternative to Server.
	// +optional
	Name string `json:"name,omitempty"`
}

// SyncPolicy controls when and how a sync happens.
type SyncPolicy struct {
	// Automated syncs whenever the live state differs from the desired state.
	// +optional
	Automated *SyncPolicyAutomated `json:"automated,omitempty"`
	// SyncOptions are options such as CreateNamespace=true or ServerSideApply=true.
	// +optional
	SyncOptions SyncOptions `json:"syncOptions,omitempty"`
	// Retry controls how a failed sync is retried.
	// +optional
	Retry *RetryStrategy `json:"retry,omitempty"`
	// ManagedNamespaceMetadata is applied to the namespace made by CreateNamespace=true.
	// +optional
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// IsAutomatedSyncEnabled reports whether automated sync is on:
// automated is set and not turned off by its enabled field (Argo CD 3.1
// and later). A nil policy has it off.
func (p *SyncPolicy) IsAutomatedSyncEnabled() bool {
	return p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
}

// SyncOptions are key=value options for a sync.
type SyncOptions []string

// SyncPolicyAutomated controls automated sync.
type SyncPolicyAutomated struct {
	// Prune deletes resources that are no longer declared. Default false.
	// +optional
	Prune bool `json:"prune,omitempty"`
	// SelfHeal syncs again when the live state drifts without a new revision. Default false.
	// +optional
	SelfHeal bool `json:"selfHeal,omitempty"`
	// AllowEmpty lets an automated sync with prune delete every resource. Default false.
	// +optional
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	// Enabled turns automated sync on or off. Unset means on when Automated is set.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// RetryStrategy controls how a failed sync is retried.
type RetryStrategy struct {
	// Limit is the number of retries; 0 means none, a negative number means forever.
	// +optional
	Limit int64 `json:"limit,omitempty"`
	// Backoff is the delay between retries.
	// +optional
	Backoff *Backoff `json:"backoff,omitempty"`
	// Refresh retries with the latest revision instead of the one that failed.
	// +optional
	Refresh bool `json:"refresh,omitempty"`
}

// Backoff is an exponential delay between retries.
type Backoff struct {
	// Duration is the first delay, as a Go duration ("5s") or seconds. Default 5s.
	// +optional
	Duration string `json:"duration,omitempty"`
	// Factor multiplies the delay after each retry. Default 2.
	// +optional
	Factor *int64 `json:"factor,omitempty"`
	// MaxDuration caps the delay. Default 3m.
	// +optional
	MaxDuration string `json:"maxDuration,omitempty"`
}

// ManagedNamespaceMetadata is the labels and annotations of a namespace that
// a sync creates.
type ManagedNamespaceMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ResourceIgnoreDifferences leaves fields of matching resources out of the comparison.
type ResourceIgnoreDifferences struct {
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// JSONPointers are RFC 6901 pointers to ignored fields.
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPathExpressions are jq paths to ignored fields.
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
	// ManagedFieldsManagers are field managers whose fields are ignored.
	// +optional
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// IgnoreDifferences is a list of ignore rules.
type IgnoreDifferences []ResourceIgnoreDifferences

// Info is a name and value shown with an Application.
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Operation is a requested operation on an Application.
type Operation struct {
	// Sync is a sync request.
	// +optional
	Sync *SyncOperation `json:"sync,omitempty"`
	// InitiatedBy says who asked for the operation.
	// +optional
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
	// Info is extra information about the operation.
	// +optional
	Info []*Info `json:"info,omitempty"`
	// Retry controls how the operation is retried when it fails.
	// +optional
	Retry RetryStrategy `json:"retry,omitempty"`
}

// OperationInitiator says who started an operation.
type OperationInitiator struct {
	// Username is the user who asked for the operation.
	// +optional
	Username string `json:"username,omitempty"`
	// Automated is true when the controller started the operation itself.
	// +optional
	Automated bool `json:"automated,omitempty"`
}

// SyncOperation is a request to sync an Application.
type SyncOperation struct {
	// Revision to sync to. Empty means the source's targetRevision.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Prune deletes resources that are no longer declared.
	// +optional
	Prune bool `json:"prune,omitempty"`
	// DryRun runs the sync without changing the cluster.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// SyncStrategy is apply or hook. Default hook.
	// +optional
	SyncStrategy *SyncStrategy `json:"syncStrategy,omitempty"`
	// Resources limits the sync to these resources. Empty means all.
	// +optional
	Resources []SyncOperationResource `json:"resources,omitempty"`
	// Source overrides the Application's source for this sync.
	// +optional
	Source *ApplicationSource `json:"source,omitempty"`
	// Manifests are manifests to sync instead of rendering the source.
	// +optional
	Manifests []string `json:"manifests,omitempty"`
	// SyncOptions override the Application's sync options for this sync.
	// +optional
	SyncOptions SyncOptions `json:"syncOptions,omitempty"`
	// Sources overrides the Application's sources for this sync.
	// +optional
	Sources ApplicationSources `json:"sources,omitempty"`
	// Revisions to sync to, one per source of a multi-source Application.
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// SelfHealAttemptsCount counts self-heal syncs in a row, for backoff.
	// +optional
	SelfHealAttemptsCount int64 `json:"autoHealAttemptsCount,omitempty"`
}

// SyncStrategy is how a sync applies resources.
type SyncStrategy struct {
	// Apply applies resources without running hooks, like kubectl apply.
	// +optional
	Apply *SyncStrategyApply `json:"apply,omitempty"`
	// Hook runs hooks and waves. The default.
	// +optional
	Hook *SyncStrategyHook `json:"hook,omitempty"`
}

// SyncStrategyApply applies resources without hooks.
type SyncStrategyApply struct {
	// Force deletes and recreates resources that cannot be patched.
	// +optional
	Force bool `json:"force,omitempty"`
}

// SyncStrategyHook runs hooks and waves.
type SyncStrategyHook struct {
	SyncStrategyApply `json:",inline"`
}

// RunsHooks reports whether a sync with this strategy runs hooks: all but
// the apply strategy do.
func (s *SyncStrategy) RunsHooks() bool { return s == nil || s.Apply == nil }

// Forced reports whether the strategy asks for force.
func (s *SyncStrategy) Forced() bool {
	return s != nil && ((s.Apply != nil && s.Apply.Force) || (s.Hook != nil && s.Hook.Force))
}

// SyncOperationResource names one resource of a selective sync.
type SyncOperationResource struct {
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ApplicationStatus is the observed state of an Application.
type ApplicationStatus struct {
	// Resources are the resources the Application manages, with their sync and health.
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
	// Sync is how the live state compares with the desired state.
	// +optional
	Sync SyncStatus `json:"sync,omitempty"`
	// Health is the Application's overall health.
	// +optional
	Health AppHealthStatus `json:"health,omitempty"`
	// History lists past syncs, newest last.
	// +optional
	History RevisionHistories `json:"history,omitempty"`
	// Conditions are errors and warnings about the Application.
	// +optional
	Conditions []ApplicationCondition `json:"conditions,omitempty"`
	// ReconciledAt is when the Application was last compared.
	// +optional
	ReconciledAt *metav1.Time `json:"reconciledAt,omitempty"`
	// OperationState is the state of the current or last operation.
	// +optional
	OperationState *OperationState `json:"operationState,omitempty"`
	// ObservedAt is when the live state was last observed. Deprecated in Argo CD; kept for compatibility.
	// +optional
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
	// SourceType is how the single source is rendered.
	// +optional
	SourceType ApplicationSourceType `json:"sourceType,omitempty"`
	// Summary lists the images and external URLs of the Application.
	// +optional
	Summary ApplicationSummary `json:"summary,omitempty"`
	// ResourceHealthSource is "appTree" when resource health lives outside the Application.
	// +optional
	ResourceHealthSource string `json:"resourceHealthSource,omitempty"`
	// SourceTypes are how each source of a multi-source Application is rendered.
	// +optional
	SourceTypes []ApplicationSourceType `json:"sourceTypes,omitempty"`
	// ControllerNamespace is the namespace of the controller that manages the Application.
	// +optional
	ControllerNamespace string `json:"controllerNamespace,omitempty"`
	// SourceHydrator is what the source hydrator last did.
	// +optional
	SourceHydrator SourceHydratorStatus `json:"sourceHydrator,omitempty"`
}

// SyncStatus is how the live state compares with the desired state.
type SyncStatus struct {
	Status SyncStatusCode `json:"status"`
	// ComparedTo is the source and destination the comparison used.
	// +optional
	ComparedTo ComparedTo `json:"comparedTo,omitempty"`
	// Revision is the resolved commit SHA or chart version of the single source.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Revisions are the resolved revisions of a multi-source Application.
	// +optional
	Revisions []string `json:"revisions,omitempty"`
}

// ComparedTo is the source and destination a comparison used.
type ComparedTo struct {
	// +optional
	Source ApplicationSource `json:"source,omitempty"`
	// +optional
	Destination ApplicationDestination `json:"destination"`
	// +optional
	Sources ApplicationSources `json:"sources,omitempty"`
	// +optional
	IgnoreDifferences IgnoreDifferences `json:"ignoreDifferences,omitempty"`
}

// HealthStatus is the health of one resource.
type HealthStatus struct {
	// +optional
	Status HealthStatusCode `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// AppHealthStatus is the overall health of an Application.
type AppHealthStatus struct {
	// +optional
	Status HealthStatusCode `json:"status,omitempty"`
	// Message explains the status. Deprecated in Argo CD 3; kept for compatibility.
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ResourceStatus is the sync and health of one managed resource.
type ResourceStatus struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Status SyncStatusCode `json:"status,omitempty"`
	// +optional
	Health *HealthStatus `json:"health,omitempty"`
	// Hook is true for hook resources.
	// +optional
	Hook bool `json:"hook,omitempty"`
	// RequiresPruning is true for live resources that are no longer declared.
	// +optional
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// SyncWave is the resource's argocd.argoproj.io/sync-wave.
	// +optional
	SyncWave int64 `json:"syncWave,omitempty"`
	// RequiresDeletionConfirmation is true when pruning waits for a user's confirmation.
	// +optional
	RequiresDeletionConfirmation bool `json:"requiresDeletionConfirmation,omitempty"`
}

// RevisionHistory is one past sync.
type RevisionHistory struct {
	// Revision is the synced revision of the single source.
	// +optional
	Revision string `json:"revision,omitempty"`
	// DeployedAt is when the sync finished.
	DeployedAt metav1.Time `json:"deployedAt"`
	// ID identifies the entry for rollback.
	ID int64 `json:"id"`
	// +optional
	Source ApplicationSource `json:"source,omitempty"`
	// DeployStartedAt is when the sync started.
	// +optional
	DeployStartedAt *metav1.Time `json:"deployStartedAt,omitempty"`
	// +optional
	Sources ApplicationSources `json:"sources,omitempty"`
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// InitiatedBy says who started the sync.
	// +optional
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
}

// RevisionHistories is a list of past syncs.
type RevisionHistories []RevisionHistory

// ApplicationCondition is an error or warning about an Application.
type ApplicationCondition struct {
	// Type is the condition type, such as ComparisonError or SyncError.
	Type ApplicationConditionType `json:"type"`
	// Message says what is wrong.
	Message string `json:"message"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// OperationState is the progress and result of an operation.
type OperationState struct {
	// Operation is the operation being carried out.
	Operation Operation `json:"operation"`
	// Phase is Running, Terminating, Failed, Error or Succeeded.
	Phase OperationPhase `json:"phase"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	SyncResult *SyncOperationResult `json:"syncResult,omitempty"`
	StartedAt  metav1.Time          `json:"startedAt"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// RetryCount is how many times the operation was retried.
	// +optional
	RetryCount int64 `json:"retryCount,omitempty"`
}

// SyncOperationResult is the result of a sync.
type SyncOperationResult struct {
	// +optional
	Resources ResourceResults `json:"resources,omitempty"`
	// Revision is the revision the single source was synced to.
	Revision string `json:"revision"`
	// +optional
	Source ApplicationSource `json:"source,omitempty"`
	// +optional
	Sources ApplicationSources `json:"sources,omitempty"`
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// +optional
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// ResourceResult is what a sync did to one resource.
type ResourceResult struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// +optional
	Status ResultCode `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	HookType HookType `json:"hookType,omitempty"`
	// +optional
	HookPhase OperationPhase `json:"hookPhase,omitempty"`
	// +optional
	SyncPhase SyncPhase `json:"syncPhase,omitempty"`
	// +optional
	Images []string `json:"images,omitempty"`
}

// ResourceResults is a list of per-resource sync results.
type ResourceResults []*ResourceResult

// ApplicationSummary lists what an Application exposes and runs.
type ApplicationSummary struct {
	// +optional
	ExternalURLs []string `json:"externalURLs,omitempty"`
	// +optional
	Images []string `json:"images,omitempty"`
	// IsAppOfApps is true when the Application manages other Applications.
	// +optional
	IsAppOfApps bool `json:"isAppOfApps,omitempty"`
}
