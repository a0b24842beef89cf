package v1alpha1

// SyncStatusCode says whether live resources match the desired state.
type SyncStatusCode string

// Sync status codes.
const (
	SyncStatusCodeUnknown   SyncStatusCode = "Unknown"
	SyncStatusCodeSynced    SyncStatusCode = "Synced"
	SyncStatusCodeOutOfSync SyncStatusCode = "OutOfSync"
)

// HealthStatusCode is the health of a resource or an Application.
type HealthStatusCode string

// Health status codes, from best to worst as Argo CD orders them.
const (
	HealthStatusUnknown     HealthStatusCode = "Unknown"
	HealthStatusProgressing HealthStatusCode = "Progressing"
	HealthStatusHealthy     HealthStatusCode = "Healthy"
	HealthStatusSuspended   HealthStatusCode = "Suspended"
	HealthStatusDegraded    HealthStatusCode = "Degraded"
	HealthStatusMissing     HealthStatusCode = "Missing"
)

// OperationPhase is the phase of an operation or a hook.
type OperationPhase string

// Operation phases.
const (
	OperationRunning     OperationPhase = "Running"
	OperationTerminating OperationPhase = "Terminating"
	OperationFailed      OperationPhase = "Failed"
	OperationError       OperationPhase = "Error"
	OperationSucceeded   OperationPhase = "Succeeded"
)

// Completed reports whether the phase is final.
func (p OperationPhase) Completed() bool {
	switch p {
	case OperationFailed, OperationError, OperationSucceeded:
		return true
	}
	return false
}

// Successful reports whether the phase is Succeeded.
func (p OperationPhase) Successful() bool { return p == OperationSucceeded }

// ResultCode is what a sync did to one resource.
type ResultCode string

// Result codes.
const (
	ResultCodeSynced       ResultCode = "Synced"
	ResultCodeSyncFailed   ResultCode = "SyncFailed"
	ResultCodePruned       ResultCode = "Pruned"
	ResultCodePruneSkipped ResultCode = "PruneSkipped"
)

// SyncPhase is a phase of a sync.
type SyncPhase string

// Sync phases, in the order they run (SyncFail only after a failure).
const (
	SyncPhasePreSync  SyncPhase = "PreSync"
	SyncPhaseSync     SyncPhase = "Sync"
	SyncPhasePostSync SyncPhase = "PostSync"
	SyncPhaseSyncFail SyncPhase = "SyncFail"
)

// HookType is the value of the argocd.argoproj.io/hook annotation.
type HookType string

// Hook types.
const (
	HookTypePreSync  HookType = "PreSync"
	HookTypeSync     HookType = "Sync"
	HookTypePostSync HookType = "PostSync"
	HookTypeSkip     HookType = "Skip"
	HookTypeSyncFail HookType = "SyncFail"
)

// ApplicationConditionType is the type of an ApplicationCondition.
type ApplicationConditionType string

// Condition types, as Argo CD names them.
const (
	ApplicationConditionDeletionError           ApplicationConditionType = "DeletionError"
	ApplicationConditionInvalidSpecError        ApplicationConditionType = "InvalidSpecError"
	ApplicationConditionComparisonError         ApplicationConditionType = "ComparisonError"
	ApplicationConditionSyncError               ApplicationConditionType = "SyncError"
	ApplicationConditionUnknownError            ApplicationConditionType = "UnknownError"
	ApplicationConditionSharedResourceWarning   ApplicationConditionType = "SharedResourceWarning"
	ApplicationConditionRepeatedResourceWarning ApplicationConditionType = "RepeatedResourceWarning"
	ApplicationConditionExcludedResourceWarning ApplicationConditionType = "ExcludedResourceWarning"
	ApplicationConditionOrphanedResourceWarning ApplicationConditionType = "OrphanedResourceWarning"
)

// Well-known annotations and labels shared with Argo CD.
const (
	// AnnotationSyncWave orders resources within a sync phase.
	AnnotationSyncWave = "argocd.argoproj.io/sync-wave"
	// AnnotationHook marks a resource as a hook of the named phases.
	AnnotationHook = "argocd.argoproj.io/hook"
	// AnnotationHookDeletePolicy says when a hook is deleted.
	AnnotationHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	// AnnotationSyncOptions holds per-resource sync options.
	AnnotationSyncOptions = "argocd.argoproj.io/sync-options"
	// AnnotationCompareOptions holds per-resource compare options.
	AnnotationCompareOptions = "argocd.argoproj.io/compare-options"
	// AnnotationTrackingID links a live resource to its Application.
	AnnotationTrackingID = "argocd.argoproj.io/tracking-id"
	// AnnotationInstallationID names the installation (argocd-cm's
	// installationID) whose Application the tracking id means.
	AnnotationInstallationID = "argocd.argoproj.io/installation-id"
	// AnnotationRefresh asks the controller to refresh an Application ("normal" or "hard").
	AnnotationRefresh = "argocd.argoproj.io/refresh"
	// AnnotationApplicationSetRefresh asks the ApplicationSet controller to
	// run a set's generators now; the API server sets it on a Git push the
	// set's git generators read, the controller removes it once done.
	AnnotationApplicationSetRefresh = "argocd.argoproj.io/application-set-refresh"
	// AnnotationDeletionApproved, on an Application, is when a user
	// approved deleting the resources that ask for it (Prune=confirm,
	// Delete=confirm): an RFC 3339 time, from the operation's start (or
	// the Application's deletion) on.
	AnnotationDeletionApproved = "argocd.argoproj.io/deletion-approved"
	// AnnotationSkipReconcile, "true" on an Application, keeps the
	// controller away from it: no comparison, no sync, no status.
	AnnotationSkipReconcile = "argocd.argoproj.io/skip-reconcile"
	// AnnotationManifestGeneratePaths names, ";"-separated, the paths an
	// Application's manifests come from: relative to its source's path, or
	// to the repository's root when they start with "/". A push changing
	// none of them does not refresh it.
	AnnotationManifestGeneratePaths = "argocd.argoproj.io/manifest-generate-paths"
	// LabelSecretType marks repository, credential-template and cluster Secrets.
	LabelSecretType = "argocd.argoproj.io/secret-type"
	// AnnotationManagedBy, set to ManagedByArgoCD, marks Secrets written
	// through the API (repositories, clusters), as Argo CD marks them.
	AnnotationManagedBy = "managed-by"
	// ManagedByArgoCD is AnnotationManagedBy's value.
	ManagedByArgoCD = "argocd.argoproj.io"
	// LabelAppInstance is the label-based tracking method's label.
	LabelAppInstance = "app.kubernetes.io/instance"
	// ResourcesFinalizerName on an Application makes its deletion delete
	// its resources first (in the foreground; with a /background suffix,
	// in the background).
	ResourcesFinalizerName = "resources-finalizer.argocd.argoproj.io"
)

// Values of the argocd.argoproj.io/secret-type label.
const (
	SecretTypeRepository      = "repository"
	SecretTypeRepoCredentials = "repo-creds"
	// SecretTypeRepositoryWrite and SecretTypeRepoWriteCredentials are
	// their counterparts holding push credentials (the source hydrator's).
	SecretTypeRepositoryWrite      = "repository-write"
	SecretTypeRepoWriteCredentials = "repo-write-creds"
	SecretTypeCluster              = "cluster"
	// SecretTypeSCMCreds marks a Secret an ApplicationSet generator's
	// tokenRef may read under the token reference strict mode.
	SecretTypeSCMCreds = "scm-creds"
)

// GetSyncOptions returns spec.syncPolicy.syncOptions (nil without a sync
// policy).
func (s *ApplicationSpec) GetSyncOptions() []string {
	if s.SyncPolicy == nil {
		return nil
	}
	return s.SyncPolicy.SyncOptions
}

// GetSources returns the Application's sources, single or multiple. With
// a source hydrator the source is the hydrated branch (SyncSource), as in
// Argo CD: what the controller compares and syncs.
func (s *ApplicationSpec) GetSources() ApplicationSources {
	if s.SourceHydrator != nil {
		return ApplicationSources{s.SourceHydrator.SyncApplicationSource()}
	}
	if len(s.Sources) > 0 {
		return s.Sources
	}
	if s.Source != nil {
		return ApplicationSources{*s.Source}
	}
	return nil
}

// SingleSource returns the source of a single-source Application (its
// source, or with a source hydrator the hydrated branch), or nil for a
// multi-source one or one without a source.
func (s *ApplicationSpec) SingleSource() *ApplicationSource {
	if srcs := s.GetSources(); len(srcs) == 1 && len(s.Sources) == 0 {
		return &srcs[0]
	}
	return nil
}

// IsHook reports whether an object's annotations make it a sync hook
// (Argo CD's or Helm's); hooks are run by syncs, not compared or pruned.
func IsHook(annotations map[string]string) bool {
	if _, ok := annotations[AnnotationHook]; ok {
		return true
	}
	_, ok := annotations["helm.sh/hook"]
	return ok
}
