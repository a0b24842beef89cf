package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultAppProjectName is the project every installation has.
const DefaultAppProjectName = "default"

// AppProject groups Applications and limits what they may deploy, from where
// and to where, and who may act on them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=appprojects,shortName=appproj;appprojs,categories=argoproj
type AppProject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              AppProjectSpec `json:"spec"`
	// +optional
	Status AppProjectStatus `json:"status,omitempty"`
}

// AppProjectList is a list of AppProjects.
//
// +kubebuilder:object:root=true
type AppProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []AppProject `json:"items"`
}

// AppProjectSpec is what a project allows.
type AppProjectSpec struct {
	// SourceRepos are repository URL globs Applications may use; "*" allows all.
	// +optional
	SourceRepos []string `json:"sourceRepos,omitempty"`
	// Destinations are the clusters and namespaces Applications may deploy to.
	// +optional
	Destinations []ApplicationDestination `json:"destinations,omitempty"`
	// Description says what the project is for.
	// +optional
	Description string `json:"description,omitempty"`
	// Roles are project-scoped roles with policies, groups and JWT tokens.
	// +optional
	Roles []ProjectRole `json:"roles,omitempty"`
	// ClusterResourceWhitelist are cluster-scoped kinds Applications may deploy.
	// +optional
	ClusterResourceWhitelist []ClusterResourceRestrictionItem `json:"clusterResourceWhitelist,omitempty"`
	// NamespaceResourceBlacklist are namespaced kinds Applications may not deploy.
	// +optional
	NamespaceResourceBlacklist []metav1.GroupKind `json:"namespaceResourceBlacklist,omitempty"`
	// OrphanedResources turns on monitoring of resources no Application tracks.
	// +optional
	OrphanedResources *OrphanedResourcesMonitorSettings `json:"orphanedResources,omitempty"`
	// SyncWindows allow or deny syncs on a schedule.
	// +optional
	SyncWindows SyncWindows `json:"syncWindows,omitempty"`
	// NamespaceResourceWhitelist are the only namespaced kinds Applications may deploy.
	// +optional
	NamespaceResourceWhitelist []metav1.GroupKind `json:"namespaceResourceWhitelist,omitempty"`
	// SignatureKeys are GnuPG key IDs commits must be signed with.
	// +optional
	SignatureKeys []SignatureKey `json:"signatureKeys,omitempty"`
	// ClusterResourceBlacklist are cluster-scoped kinds Applications may not deploy.
	// +optional
	ClusterResourceBlacklist []ClusterResourceRestrictionItem `json:"clusterResourceBlacklist,omitempty"`
	// SourceNamespaces are namespaces, besides the control namespace, whose
	// Applications may use this project.
	// +optional
	SourceNamespaces []string `json:"sourceNamespaces,omitempty"`
	// SourceIntegrity constrains which sources may be used (signed commits).
	// When set it takes the place of SignatureKeys.
	// +optional
	SourceIntegrity *SourceIntegrity `json:"sourceIntegrity,omitempty"`
	// PermitOnlyProjectScopedClusters limits destinations to clusters scoped to this project.
	// +optional
	PermitOnlyProjectScopedClusters bool `json:"permitOnlyProjectScopedClusters,omitempty"`
	// DestinationServiceAccounts are the service accounts syncs impersonate, per destination.
	// +optional
	DestinationServiceAccounts []ApplicationDestinationServiceAccount `json:"destinationServiceAccounts,omitempty"`
}

// ClusterResourceRestrictionItem is a cluster-scoped kind, optionally limited to one name.
type ClusterResourceRestrictionItem struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Name is a glob of resource names; empty means all.
	// +optional
	Name string `json:"name,omitempty"`
}

// ProjectRole is a role scoped to one project.
type ProjectRole struct {
	// Name is the role's name.
	Name string `json:"name"`
	// +optional
	Description string `json:"description,omitempty"`
	// Policies are casbin policy lines for the role.
	// +optional
	Policies []string `json:"policies,omitempty"`
	// JWTTokens are the tokens issued for the role.
	// +optional
	JWTTokens []JWTToken `json:"jwtTokens,omitempty"`
	// Groups are SSO groups bound to the role.
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// JWTToken records an issued token by its issue time, expiry and id.
type JWTToken struct {
	IssuedAt int64 `json:"iat"`
	// +optional
	ExpiresAt int64 `json:"exp,omitempty"`
	// +optional
	ID string `json:"id,omitempty"`
}

// JWTTokens is a list of tokens.
type JWTTokens struct {
	// +optional
	Items []JWTToken `json:"items,omitempty"`
}

// OrphanedResourcesMonitorSettings controls orphaned-resource monitoring.
type OrphanedResourcesMonitorSettings struct {
	// Warn adds a warning condition when orphaned resources exist.
	// +optional
	Warn *bool `json:"warn,omitempty"`
	// Ignore lists resources that are never reported as orphaned.
	// +optional
	Ignore []OrphanedResourceKey `json:"ignore,omitempty"`
}

// OrphanedResourceKey matches resources by group, kind and name glob.
type OrphanedResourceKey struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
}

// SyncWindow allows or denies syncs during a cron-scheduled period.
type SyncWindow struct {
	// Kind is "allow" or "deny".
	// +optional
	Kind string `json:"kind,omitempty"`
	// Schedule is a cron expression for the window's start.
	// +optional
	Schedule string `json:"schedule,omitempty"`
	// Duration is how long the window lasts, such as 1h.
	// +optional
	Duration string `json:"duration,omitempty"`
	// Applications are Application name globs the window applies to.
	// +optional
	Applications []string `json:"applications,omitempty"`
	// Namespaces are namespace globs the window applies to.
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// Clusters are cluster name or server globs the window applies to.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
	// ManualSync allows manual syncs during a deny window.
	// +optional
	ManualSync bool `json:"manualSync,omitempty"`
	// TimeZone is the schedule's IANA time zone. Default UTC.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
	// UseAndOperator matches only when every selector matches.
	// +optional
	UseAndOperator bool `json:"andOperator,omitempty"`
	// Description says what the window is for.
	// +optional
	Description string `json:"description,omitempty"`
	// SyncOverrun lets a sync that started while syncs were allowed run on
	// after the window closes (allow windows) or opens (deny windows).
	// +optional
	SyncOverrun bool `json:"syncOverrun,omitempty"`
}

// SyncWindows is a list of sync windows.
type SyncWindows []*SyncWindow

// SignatureKey is a GnuPG key ID.
type SignatureKey struct {
	KeyID string `json:"keyID"`
}

// ApplicationDestinationServiceAccount is the service account syncs to a
// destination impersonate.
type ApplicationDestinationServiceAccount struct {
	// Server is the destination cluster's URL (glob).
	Server string `json:"server"`
	// Namespace is the destination namespace (glob).
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// DefaultServiceAccount is the service account, as name or namespace:name.
	DefaultServiceAccount string `json:"defaultServiceAccount"`
}

// AppProjectStatus is the observed state of an AppProject.
type AppProjectStatus struct {
	// JWTTokensByRole lists issued tokens per role.
	// +optional
	JWTTokensByRole map[string]JWTTokens `json:"jwtTokensByRole,omitempty"`
}

// SourceIntegrity constrains which manifest sources may be used: today,
// GnuPG signatures on Git commits or tags per repository.
type SourceIntegrity struct {
	// Git holds the policies for Git sources.
	Git *SourceIntegrityGit `json:"git"`
}

// SourceIntegrityGit lists the signature policies for Git sources.
type SourceIntegrityGit struct {
	// Policies apply in order; the first whose repos match a source applies.
	Policies []SourceIntegrityGitPolicy `json:"policies"`
}

// SourceIntegrityGitPolicy is a signature rule for matching repositories.
type SourceIntegrityGitPolicy struct {
	// Repos are the repositories the policy applies to.
	Repos []SourceIntegrityGitPolicyRepo `json:"repos"`
	// GPG is the signature check.
	GPG *SourceIntegrityGitPolicyGPG `json:"gpg"`
}

// SourceIntegrityGitPolicyRepo matches repositories by URL glob.
type SourceIntegrityGitPolicyRepo struct {
	// URL is a glob matched against the repository URL.
	URL string `json:"url"`
}

// SourceIntegrityGitPolicyGPG names the keys a signature must be made with.
type SourceIntegrityGitPolicyGPG struct {
	// Mode is how signatures are checked (Argo CD's "none", "head", "strict").
	Mode string `json:"mode"`
	// Keys are the trusted key IDs, from the repo server's keyring.
	Keys []string `json:"keys"`
}
