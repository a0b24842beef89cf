package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ImageUpdater selects Applications and keeps their images current.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Apps",type=integer,JSONPath=`.status.applicationsMatched`
// +kubebuilder:printcolumn:name="Images",type=integer,JSONPath=`.status.imagesManaged`
// +kubebuilder:printcolumn:name="Last Checked",type=date,JSONPath=`.status.lastCheckedAt`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type ImageUpdater struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ImageUpdaterSpec   `json:"spec,omitempty"`
	Status ImageUpdaterStatus `json:"status,omitempty"`
}

// ImageUpdaterList is a list of ImageUpdaters.
//
// +kubebuilder:object:root=true
type ImageUpdaterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImageUpdater `json:"items"`
}

// ImageUpdaterSpec says which Applications to manage and the defaults of
// every Application reference.
type ImageUpdaterSpec struct {
	// Namespace is where the selected Applications live. Image Updater 1.0
	// required it; from 1.1 on the Applications are those of the
	// ImageUpdater's own namespace, which is also the default here. Any
	// other value is refused with a condition: an ImageUpdater never
	// reaches into another namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// CommonUpdateSettings are the defaults of every image.
	// +optional
	CommonUpdateSettings *CommonUpdateSettings `json:"commonUpdateSettings,omitempty"`

	// WriteBackConfig is the default write-back of every Application.
	// +optional
	WriteBackConfig *WriteBackConfig `json:"writeBackConfig,omitempty"`

	// ApplicationRefs select the Applications. An Application matched by
	// several takes the most specific one: an exact name before a
	// pattern, a label selector before none, more literal characters and
	// more selector terms before fewer.
	// +kubebuilder:validation:MinItems=1
	// +listType=map
	// +listMapKey=namePattern
	ApplicationRefs []ApplicationRef `json:"applicationRefs"`

	// ImagesVerification is the default signature check of every image.
	// +optional
	ImagesVerification *ImagesVerification `json:"imagesVerification,omitempty"`
}

// ApplicationRef selects Applications by name and labels, and gives their
// images and settings.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.useAnnotations) && self.useAnnotations == true) ? (has(self.images) && size(self.images) > 0) : true",message="Either useAnnotations must be true, or images must be provided with at least one item"
type ApplicationRef struct {
	// NamePattern is a glob the Application's name must match.
	// +kubebuilder:validation:Required
	NamePattern string `json:"namePattern"`

	// LabelSelectors the Application's labels must match.
	// +optional
	LabelSelectors *metav1.LabelSelector `json:"labelSelectors,omitempty"`

	// UseAnnotations reads the selected Applications' settings from their
	// argocd-image-updater.argoproj.io/* annotations, as before 1.0; the
	// settings and images of this reference are then ignored (its
	// imagesVerification still applies).
	// +optional
	// +kubebuilder:default:=false
	UseAnnotations *bool `json:"useAnnotations,omitempty"`

	// ImagesVerification overrides the spec's for these Applications.
	// +optional
	ImagesVerification *ImagesVerification `json:"imagesVerification,omitempty"`

	// CommonUpdateSettings override the spec's for these Applications.
	// +optional
	CommonUpdateSettings *CommonUpdateSettings `json:"commonUpdateSettings,omitempty"`

	// WriteBackConfig overrides the spec's for these Applications.
	// +optional
	WriteBackConfig *WriteBackConfig `json:"writeBackConfig,omitempty"`

	// Images are the images to keep current in these Applications.
	// +optional
	// +listType=map
	// +listMapKey=alias
	Images []ImageConfig `json:"images,omitempty"`
}

// ImageConfig is one image to keep current.
type ImageConfig struct {
	// Alias names the image within its reference, as the alias= part of
	// the image-list annotation does.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][a-zA-Z0-9-._]*$`
	Alias string `json:"alias"`

	// ImageName is the image, with its registry unless Docker Hub, and
	// after a colon an optional version constraint (semver) or the tag
	// to follow (digest): nginx:1.17.x, ghcr.io/org/app.
	// +kubebuilder:validation:Required
	ImageName string `json:"imageName"`

	// CommonUpdateSettings override the reference's for this image.
	// +optional
	CommonUpdateSettings *CommonUpdateSettings `json:"commonUpdateSettings,omitempty"`

	// ManifestTarget says which Helm parameters, Kustomize image or
	// plugin variables carry this image.
	// +optional
	ManifestTarget *ManifestTarget `json:"manifestTargets,omitempty"`

	// ImagesVerification overrides the reference's for this image.
	// +optional
	ImagesVerification *ImagesVerification `json:"imagesVerification,omitempty"`
}

// CommonUpdateSettings are how an image picks its next version. Unset
// fields take the value of the level above.
type CommonUpdateSettings struct {
	// UpdateStrategy is semver, newest-build (latest), alphabetical
	// (name) or digest.
	// +optional
	// +kubebuilder:default:="semver"
	UpdateStrategy *string `json:"updateStrategy,omitempty"`

	// ForceUpdate updates the image even when the Application does not
	// deploy it yet.
	// +optional
	// +kubebuilder:default:=false
	ForceUpdate *bool `json:"forceUpdate,omitempty"`

	// AllowTags keeps only matching tags: regexp:<expression> or any.
	// +optional
	AllowTags *string `json:"allowTags,omitempty"`

	// IgnoreTags are globs of tags never taken.
	// +listType=atomic
	// +optional
	IgnoreTags []string `json:"ignoreTags,omitempty"`

	// PullSecret is where registry credentials come from:
	// pullsecret:ns/name, secret:ns/name#field, env:VAR or ext:/path.
	// +optional
	PullSecret *string `json:"pullSecret,omitempty"`

	// Platforms limit a multi-platform image to these os/arch[/variant].
	// +listType=atomic
	// +optional
	Platforms []string `json:"platforms,omitempty"`
}

// WriteBackConfig is where new versions are written.
type WriteBackConfig struct {
	// Method is argocd (the Application's spec, the default), git
	// (commit with the repository's credentials), git:repocreds, or
	// git:secret:[ns/]name (commit with that Secret's credentials; the
	// namespace defaults to the ImageUpdater's).
	// +optional
	// +kubebuilder:validation:Pattern=`^(argocd|git|git:[a-zA-Z0-9][a-zA-Z0-9-._/:]*)$`
	Method *string `json:"method,omitempty"`

	// GitConfig are the Git settings of the git methods.
	// +optional
	GitConfig *GitConfig `json:"gitConfig,omitempty"`
}

// GitConfig are where and how a Git write-back commits.
type GitConfig struct {
	// Repository to push to, if not the Application source's.
	// +optional
	Repository *string `json:"repository,omitempty"`

	// Branch to commit to, or base:target to push to a target branch
	// (a template) created from base. With a pull request, the branch the
	// request goes into.
	// +optional
	Branch *string `json:"branch,omitempty"`

	// WriteBackTarget is the file to edit: kustomization[:path],
	// helmvalues[:path], or a path for the parameter override file.
	// +optional
	WriteBackTarget *string `json:"writeBackTarget,omitempty"`

	// PullRequest, if set, pushes to a branch of its own and opens or
	// updates a pull (merge) request into Branch instead of pushing to it.
	// +optional
	PullRequest *PullRequest `json:"pullRequest,omitempty"`
}

// PullRequest names the provider that receives the request. Exactly one
// is set.
//
// +kubebuilder:validation:XValidation:rule="(has(self.github) ? 1 : 0) + (has(self.gitlab) ? 1 : 0) == 1",message="Exactly one of github or gitlab must be set"
type PullRequest struct {
	// GitHub opens pull requests through GitHub's API.
	// +optional
	GitHub *PullRequestGitHub `json:"github,omitempty"`

	// GitLab opens merge requests through GitLab's API.
	// +optional
	GitLab *PullRequestGitLab `json:"gitlab,omitempty"`

	// Labels are set on the request.
	// +optional
	// +listType=atomic
	Labels []string `json:"labels,omitempty"`
}

// PullRequestGitHub are GitHub's settings; the repository and the token
// come from the write-back.
type PullRequestGitHub struct {
	// API is GitHub's API address for GitHub Enterprise; by default it
	// follows the repository's host (api.github.com for github.com).
	// +optional
	API string `json:"api,omitempty"`
}

// PullRequestGitLab are GitLab's settings; the project and the token come
// from the write-back.
type PullRequestGitLab struct {
	// API is GitLab's address when it is not the repository's host.
	// +optional
	API string `json:"api,omitempty"`
}

// ManifestTarget says how the image appears in the Application's source.
// Exactly one of its fields is set.
//
// +kubebuilder:validation:XValidation:rule="(has(self.helm) ? 1 : 0) + (has(self.kustomize) ? 1 : 0) + (has(self.plugin) ? 1 : 0) == 1",message="Exactly one of helm, kustomize, or plugin must be specified within manifestTargets if the block is present."
type ManifestTarget struct {
	// +optional
	Helm *HelmTarget `json:"helm,omitempty"`
	// +optional
	Kustomize *KustomizeTarget `json:"kustomize,omitempty"`
	// +optional
	Plugin *PluginTarget `json:"plugin,omitempty"`
}

// HelmTarget names the Helm parameters of the image.
type HelmTarget struct {
	// Name is the parameter holding the image name (default image.name).
	// +optional
	Name *string `json:"name,omitempty"`
	// Tag is the parameter holding the tag (default image.tag).
	// +optional
	Tag *string `json:"tag,omitempty"`
	// Spec is one parameter holding name:tag; Name and Tag are then
	// ignored.
	// +optional
	Spec *string `json:"spec,omitempty"`
}

// KustomizeTarget names the image in the kustomization's images list.
type KustomizeTarget struct {
	// Name is the image as the kustomization lists it.
	Name *string `json:"name"`
}

// PluginTarget names the config management plugin's environment
// variables that carry the image; the write-back sets them in the
// source's plugin.env (argocd) or in the parameter override file (git).
//
// +kubebuilder:validation:XValidation:rule="has(self.spec) || has(self.name)",message="At least one of spec or name must be specified in plugin target."
type PluginTarget struct {
	// Name is the variable holding the image name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name *string `json:"name,omitempty"`
	// Tag is the variable holding the tag.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Tag *string `json:"tag,omitempty"`
	// Spec is one variable holding name:tag; Name and Tag are then
	// ignored.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Spec *string `json:"spec,omitempty"`
}

// ImagesVerification is the signature check a new version must pass
// before it is written back.
//
// +kubebuilder:validation:XValidation:rule="self.enabled == false || has(self.cosignKey)",message="at least one verification method (cosignKey) is required when verification is enabled"
type ImagesVerification struct {
	// Enabled turns the check on (the default when the block is present)
	// or off for this level.
	// +optional
	// +kubebuilder:default:=true
	Enabled *bool `json:"enabled,omitempty"`
	// CosignKey is the cosign public key (PEM) the signature must verify
	// with, in a Secret of the ImageUpdater's namespace.
	// +optional
	CosignKey *SecretRef `json:"cosignKey,omitempty"`
}

// SecretRef is one key of a Secret in the ImageUpdater's namespace.
type SecretRef struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
}

// ImageUpdaterStatus is what the last cycle found and did.
type ImageUpdaterStatus struct {
	// ObservedGeneration is the generation the last cycle read.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LastCheckedAt is when the last cycle ran.
	// +optional
	LastCheckedAt *metav1.Time `json:"lastCheckedAt,omitempty"`
	// LastUpdatedAt is when a new version was last written back.
	// +optional
	LastUpdatedAt *metav1.Time `json:"lastUpdatedAt,omitempty"`
	// ApplicationsMatched counts the Applications selected.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ApplicationsMatched int32 `json:"applicationsMatched"`
	// ImagesManaged counts the images checked over those Applications.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ImagesManaged int32 `json:"imagesManaged"`
	// RecentUpdates are the updates of the last cycle that wrote any.
	// +optional
	// +listType=atomic
	RecentUpdates []RecentUpdate `json:"recentUpdates,omitempty"`
	// Conditions are Ready, Reconciling and Error.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RecentUpdate is one image moved to one new version.
type RecentUpdate struct {
	// Alias of the image (its name when it has none).
	Alias string `json:"alias"`
	// Image is the image without tag.
	Image string `json:"image"`
	// NewVersion is the tag (and digest) written.
	NewVersion string `json:"newVersion"`
	// ApplicationsUpdated counts the Applications it was written to.
	// +kubebuilder:validation:Minimum=0
	ApplicationsUpdated int32 `json:"applicationsUpdated"`
	// UpdatedAt is when it was written.
	UpdatedAt metav1.Time `json:"updatedAt"`
	// Message says from which version.
	// +optional
	Message string `json:"message,omitempty"`
}

// The condition types of an ImageUpdater, as Argo CD Image Updater sets
// them.
const (
	// ConditionReady is True when the last cycle ran (possibly with
	// errors on some images) and False when it could not run at all.
	ConditionReady = "Ready"
	// ConditionReconciling is True while a cycle runs.
	ConditionReconciling = "Reconciling"
	// ConditionError is True when the last cycle met an error.
	ConditionError = "Error"
)
