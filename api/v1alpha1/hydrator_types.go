package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SourceHydrator renders a "dry" source and pushes the rendered manifests
// to a branch of Git, from which the Application then syncs. The
// controller hydrates when the source hydrator is enabled
// (argocd-cmd-params-cm hydrator.enabled); otherwise the Application syncs
// the branch as it finds it.
type SourceHydrator struct {
	// DrySource is where the unrendered source lives.
	DrySource DrySource `json:"drySource"`
	// SyncSource is the branch and path the Application syncs from.
	SyncSource SyncSource `json:"syncSource"`
	// HydrateTo is a staging branch the rendered manifests are pushed to
	// instead of SyncSource's branch (promotion happens outside Argo CD).
	// +optional
	HydrateTo *HydrateTo `json:"hydrateTo,omitempty"`
}

// SyncApplicationSource is the source an Application with a hydrator
// syncs from: SyncSource's path on its branch, in SyncSource's repository
// or else DrySource's.
func (h *SourceHydrator) SyncApplicationSource() ApplicationSource {
	repoURL := h.SyncSource.RepoURL
	if repoURL == "" {
		repoURL = h.DrySource.RepoURL
	}
	return ApplicationSource{RepoURL: repoURL, Path: h.SyncSource.Path, TargetRevision: h.SyncSource.TargetBranch}
}

// ApplicationSource is the dry source as a source to render.
func (d *DrySource) ApplicationSource() ApplicationSource {
	return ApplicationSource{RepoURL: d.RepoURL, TargetRevision: d.TargetRevision, Path: d.Path,
		Helm: d.Helm, Kustomize: d.Kustomize, Directory: d.Directory, Plugin: d.Plugin}
}

// DrySource is the unrendered source of a SourceHydrator.
type DrySource struct {
	// RepoURL is the Git repository.
	RepoURL string `json:"repoURL"`
	// TargetRevision is the branch, tag or commit to render.
	TargetRevision string `json:"targetRevision"`
	// Path is the directory inside the repository.
	Path string `json:"path"`
	// Helm holds options for Helm charts.
	// +optional
	Helm *ApplicationSourceHelm `json:"helm,omitempty"`
	// Kustomize holds options for Kustomize bases.
	// +optional
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	// Directory holds options for plain directories and Jsonnet.
	// +optional
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	// Plugin names a config management plugin and its parameters.
	// +optional
	Plugin *ApplicationSourcePlugin `json:"plugin,omitempty"`
}

// SyncSource is where the rendered manifests are pushed and synced from.
type SyncSource struct {
	// TargetBranch is the branch the rendered manifests are pushed to.
	TargetBranch string `json:"targetBranch"`
	// Path is the directory of the rendered manifests in that branch.
	Path string `json:"path"`
	// RepoURL is the repository to push to. Empty means DrySource's.
	// +optional
	RepoURL string `json:"repoURL,omitempty"`
}

// HydrateTo is a staging branch for rendered manifests.
type HydrateTo struct {
	// TargetBranch is the staging branch.
	TargetBranch string `json:"targetBranch"`
}

// SourceHydratorStatus is what the hydrator last did for an Application.
type SourceHydratorStatus struct {
	// LastSuccessfulOperation is the last hydration that succeeded.
	// +optional
	LastSuccessfulOperation *SuccessfulHydrateOperation `json:"lastSuccessfulOperation,omitempty"`
	// CurrentOperation is the hydration in progress or last attempted.
	// +optional
	CurrentOperation *HydrateOperation `json:"currentOperation,omitempty"`
	// LastComparedDryRevision is the dry commit the last comparison used.
	// +optional
	LastComparedDryRevision string `json:"lastComparedDryRevision,omitempty"`
}

// HydrateOperationPhase is the phase of a hydration.
type HydrateOperationPhase string

// The phases of a hydration, as Argo CD names them.
const (
	HydrateOperationPhaseHydrating HydrateOperationPhase = "Hydrating"
	HydrateOperationPhaseFailed    HydrateOperationPhase = "Failed"
	HydrateOperationPhaseHydrated  HydrateOperationPhase = "Hydrated"
)

// HydrateOperation is one hydration.
type HydrateOperation struct {
	// StartedAt is when it started.
	// +optional
	StartedAt metav1.Time `json:"startedAt,omitempty"`
	// FinishedAt is when it ended.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// Phase is Hydrating, Failed or Hydrated.
	Phase HydrateOperationPhase `json:"phase"`
	// Message says why it failed.
	Message string `json:"message"`
	// DrySHA is the rendered dry commit.
	// +optional
	DrySHA string `json:"drySHA,omitempty"`
	// HydratedSHA is the commit the rendered manifests were pushed as.
	// +optional
	HydratedSHA string `json:"hydratedSHA,omitempty"`
	// SourceHydrator is the spec the hydration used.
	// +optional
	SourceHydrator SourceHydrator `json:"sourceHydrator,omitempty"`
}

// SuccessfulHydrateOperation is a hydration that succeeded.
type SuccessfulHydrateOperation struct {
	// DrySHA is the rendered dry commit.
	// +optional
	DrySHA string `json:"drySHA,omitempty"`
	// HydratedSHA is the commit the rendered manifests were pushed as.
	// +optional
	HydratedSHA string `json:"hydratedSHA,omitempty"`
	// SourceHydrator is the spec the hydration used.
	// +optional
	SourceHydrator SourceHydrator `json:"sourceHydrator,omitempty"`
}
