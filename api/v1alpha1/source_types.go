package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSource says where an Application's manifests come from: a Git
// repository (a directory, a Kustomize base, a Helm chart or a plugin's input)
// or a Helm chart repository.
type ApplicationSource struct {
	// RepoURL is the Git repository or Helm chart repository URL.
	// +kubebuilder:validation:Required
	RepoURL string `json:"repoURL"`
	// Path is the directory inside a Git repository. Empty for Helm chart repositories.
	// +optional
	Path string `json:"path,omitempty"`
	// TargetRevision is a branch, tag, commit SHA or HEAD for Git, or a chart
	// version (or semver constraint) for Helm. Empty means HEAD.
	// +optional
	TargetRevision string `json:"targetRevision,omitempty"`
	// Helm holds options for Helm charts.
	// +optional
	Helm *ApplicationSourceHelm `json:"helm,omitempty"`
	// Kustomize holds options for Kustomize bases.
	// +optional
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	// Directory holds options for plain directories of manifests and Jsonnet.
	// +optional
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	// Plugin names a config management plugin and its parameters.
	// +optional
	Plugin *ApplicationSourcePlugin `json:"plugin,omitempty"`
	// Chart is a Helm chart name, used with a Helm chart repository in RepoURL.
	// +optional
	Chart string `json:"chart,omitempty"`
	// Ref names this source so that other sources of a multi-source
	// Application can read its files as $<ref>/path.
	// +optional
	Ref string `json:"ref,omitempty"`
	// Name is a human-readable name for the source, unique within the Application.
	// +optional
	Name string `json:"name,omitempty"`
	// TagPrefix keeps only Git tags with this prefix when TargetRevision is a
	// semver constraint; the prefix is stripped before matching and put back
	// on the tag chosen ("component-b/" with "1.0.*" picks "component-b/1.0.1").
	// +optional
	TagPrefix string `json:"tagPrefix,omitempty"`
}

// ApplicationSources is the list of sources of a multi-source Application.
type ApplicationSources []ApplicationSource

// ApplicationSourceType is the kind of tool that renders a source.
type ApplicationSourceType string

// Source types, as Argo CD names them.
const (
	SourceTypeHelm      ApplicationSourceType = "Helm"
	SourceTypeKustomize ApplicationSourceType = "Kustomize"
	SourceTypeDirectory ApplicationSourceType = "Directory"
	SourceTypePlugin    ApplicationSourceType = "Plugin"
)

// ApplicationSourceHelm holds the options for rendering a Helm chart.
type ApplicationSourceHelm struct {
	// ValueFiles are values files, relative to the chart, or $<ref>/path.
	// +optional
	ValueFiles []string `json:"valueFiles,omitempty"`
	// Parameters override single values, like helm --set.
	// +optional
	Parameters []HelmParameter `json:"parameters,omitempty"`
	// ReleaseName is the Helm release name. Empty means the Application's name.
	// +optional
	ReleaseName string `json:"releaseName,omitempty"`
	// Values is a YAML block of values, as a string.
	// +optional
	Values string `json:"values,omitempty"`
	// FileParameters set values from the content of files, like helm --set-file.
	// +optional
	FileParameters []HelmFileParameter `json:"fileParameters,omitempty"`
	// Version is the Helm major version to use. Only v3 is supported.
	// +optional
	Version string `json:"version,omitempty"`
	// PassCredentials passes repository credentials to every domain a chart's
	// dependencies are fetched from, like helm --pass-credentials.
	// +optional
	PassCredentials bool `json:"passCredentials,omitempty"`
	// IgnoreMissingValueFiles skips value files that do not exist instead of failing.
	// +optional
	IgnoreMissingValueFiles bool `json:"ignoreMissingValueFiles,omitempty"`
	// SkipCrds leaves out the chart's crds/ directory.
	// +optional
	SkipCrds bool `json:"skipCrds,omitempty"`
	// SkipSchemaValidation skips validation of values against values.schema.json.
	// +optional
	SkipSchemaValidation bool `json:"skipSchemaValidation,omitempty"`
	// SkipTests leaves out test hooks.
	// +optional
	SkipTests bool `json:"skipTests,omitempty"`
	// ValuesObject is a structured values block; it takes precedence over Values.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ValuesObject *runtime.RawExtension `json:"valuesObject,omitempty"`
	// Namespace is the release namespace. Empty means the destination namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// KubeVersion overrides the Kubernetes version templates see as .Capabilities.KubeVersion.
	// +optional
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions overrides the API versions templates see as .Capabilities.APIVersions.
	// +optional
	APIVersions []string `json:"apiVersions,omitempty"`
}

// HelmParameter is one value set on the command line, like helm --set.
type HelmParameter struct {
	// Name is the dotted path of the value.
	Name string `json:"name,omitempty"`
	// Value is the value to set.
	Value string `json:"value,omitempty"`
	// ForceString keeps the value a string, like helm --set-string.
	// +optional
	ForceString bool `json:"forceString,omitempty"`
}

// HelmFileParameter sets a value from the content of a file, like helm --set-file.
type HelmFileParameter struct {
	// Name is the dotted path of the value.
	Name string `json:"name,omitempty"`
	// Path is the file, relative to the chart.
	Path string `json:"path,omitempty"`
}

// KustomizeImage overrides an image, in the forms kustomize edit set image
// takes: name=newName:tag, name:tag, name@digest.
type KustomizeImage string

// KustomizeImages is a list of image overrides.
type KustomizeImages []KustomizeImage

// ApplicationSourceKustomize holds the options for building a Kustomize base.
type ApplicationSourceKustomize struct {
	// NamePrefix is prepended to every resource name.
	// +optional
	NamePrefix string `json:"namePrefix,omitempty"`
	// NameSuffix is appended to every resource name.
	// +optional
	NameSuffix string `json:"nameSuffix,omitempty"`
	// Images override image names, tags and digests.
	// +optional
	Images KustomizeImages `json:"images,omitempty"`
	// CommonLabels are added to every resource and selector.
	// +optional
	CommonLabels map[string]string `json:"commonLabels,omitempty"`
	// Version is the Kustomize version to use. Empty means the built-in one.
	// +optional
	Version string `json:"version,omitempty"`
	// CommonAnnotations are added to every resource.
	// +optional
	CommonAnnotations map[string]string `json:"commonAnnotations,omitempty"`
	// CommonAnnotationsEnvsubst expands ${VAR} in CommonAnnotations values with
	// the Application's build environment.
	// +optional
	CommonAnnotationsEnvsubst bool `json:"commonAnnotationsEnvsubst,omitempty"`
	// ForceCommonLabels overwrites labels that already exist.
	// +optional
	ForceCommonLabels bool `json:"forceCommonLabels,omitempty"`
	// ForceCommonAnnotations overwrites annotations that already exist.
	// +optional
	ForceCommonAnnotations bool `json:"forceCommonAnnotations,omitempty"`
	// Namespace sets the namespace of every namespaced resource.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Replicas override the replica counts of named workloads.
	// +optional
	Replicas KustomizeReplicas `json:"replicas,omitempty"`
	// Patches are applied after the base is built.
	// +optional
	Patches KustomizePatches `json:"patches,omitempty"`
	// Components are Kustomize components to include.
	// +optional
	Components []string `json:"components,omitempty"`
	// IgnoreMissingComponents skips components that do not exist instead of failing.
	// +optional
	IgnoreMissingComponents bool `json:"ignoreMissingComponents,omitempty"`
	// LabelWithoutSelector adds CommonLabels to resources but not to selectors.
	// +optional
	LabelWithoutSelector bool `json:"labelWithoutSelector,omitempty"`
	// LabelIncludeTemplates also adds CommonLabels to pod templates when
	// LabelWithoutSelector is set.
	// +optional
	LabelIncludeTemplates bool `json:"labelIncludeTemplates,omitempty"`
	// KubeVersion overrides the Kubernetes version seen by Helm charts inflated by Kustomize.
	// +optional
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions overrides the API versions seen by Helm charts inflated by Kustomize.
	// +optional
	APIVersions []string `json:"apiVersions,omitempty"`
}

// KustomizeVersion is a Kustomize program argocd-cm registers for the
// sources whose kustomize.version names it: kustomize.path.<name> (or the
// older kustomize.version.<name>) and kustomize.buildOptions.<name>. It is
// a setting, not part of any resource.
type KustomizeVersion struct {
	// Name is the version sources ask for, such as v3.5.4.
	Name string `json:"name"`
	// Path is the program.
	Path string `json:"path"`
	// BuildOptions are its `kustomize build` flags, in place of
	// kustomize.buildOptions.
	BuildOptions string `json:"buildOptions,omitempty"`
}

// KustomizeReplica sets the replica count of one workload.
type KustomizeReplica struct {
	// Name is the workload's name.
	Name string `json:"name"`
	// Count is the replica count, a number or a string holding one.
	Count intstr.IntOrString `json:"count"`
}

// KustomizeReplicas is a list of replica overrides.
type KustomizeReplicas []KustomizeReplica

// KustomizePatch is a strategic-merge or JSON 6902 patch, inline or from a file.
type KustomizePatch struct {
	// Path is a patch file, relative to the source path.
	// +optional
	Path string `json:"path,omitempty"`
	// Patch is the patch itself.
	// +optional
	Patch string `json:"patch,omitempty"`
	// Target selects the resources to patch.
	// +optional
	Target *KustomizeSelector `json:"target,omitempty"`
	// Options are Kustomize patch options such as allowNameChange.
	// +optional
	Options map[string]bool `json:"options,omitempty"`
}

// KustomizePatches is a list of patches.
type KustomizePatches []KustomizePatch

// KustomizeSelector selects resources by group, version, kind, name,
// namespace, labels and annotations.
type KustomizeSelector struct {
	KustomizeResID `json:",inline"`
	// AnnotationSelector is a label-selector expression over annotations.
	// +optional
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	// LabelSelector is a label-selector expression.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// KustomizeResID identifies resources by group, version, kind, name and namespace.
type KustomizeResID struct {
	KustomizeGvk `json:",inline"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// KustomizeGvk is a group, version and kind, any of them empty for "any".
type KustomizeGvk struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
}

// ApplicationSourceDirectory holds the options for a directory of plain
// manifests and Jsonnet files.
type ApplicationSourceDirectory struct {
	// Recurse reads subdirectories too.
	// +optional
	Recurse bool `json:"recurse,omitempty"`
	// Jsonnet holds the options for .jsonnet files.
	// +optional
	Jsonnet ApplicationSourceJsonnet `json:"jsonnet,omitempty"`
	// Exclude is a glob (with {a,b} alternatives) of files to leave out.
	// +optional
	Exclude string `json:"exclude,omitempty"`
	// Include is a glob (with {a,b} alternatives) of the only files to read.
	// +optional
	Include string `json:"include,omitempty"`
	// DisableExtensionFilter reads files whatever their extension (as YAML
	// unless they end in .json or .jsonnet), for manifests such as
	// *.yaml.sealed that Include and Exclude then pick; otherwise only
	// .yaml, .yml, .json and .jsonnet files are read. Dot files never are.
	// +optional
	DisableExtensionFilter bool `json:"disableExtensionFilter,omitempty"`
}

// ApplicationSourceJsonnet holds the options for Jsonnet evaluation.
type ApplicationSourceJsonnet struct {
	// ExtVars are external variables, std.extVar.
	// +optional
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	// TLAs are top-level arguments.
	// +optional
	TLAs []JsonnetVar `json:"tlas,omitempty"`
	// Libs are library search paths, relative to the repository root.
	// +optional
	Libs []string `json:"libs,omitempty"`
}

// JsonnetVar is a Jsonnet variable: a string, or Jsonnet code when Code is set.
type JsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// +optional
	Code bool `json:"code,omitempty"`
}

// ApplicationSourcePlugin names a config management plugin and its input.
type ApplicationSourcePlugin struct {
	// Name is the plugin's name. Empty means the plugin is found by discovery.
	// +optional
	Name string `json:"name,omitempty"`
	// Env is passed to the plugin as ARGOCD_ENV_<name> variables.
	// +optional
	Env Env `json:"env,omitempty"`
	// Parameters are passed to the plugin as JSON.
	// +optional
	Parameters ApplicationSourcePluginParameters `json:"parameters,omitempty"`
}

// EnvEntry is one environment variable.
type EnvEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Env is a list of environment variables.
type Env []*EnvEntry

// ApplicationSourcePluginParameter is one plugin parameter: a string, an
// array or a map.
type ApplicationSourcePluginParameter struct {
	Name string `json:"name,omitempty"`
	// String is a string value.
	// +optional
	String_ *string `json:"string,omitempty"` //nolint:revive // field named after its JSON key, as in Argo CD
	// Map is a map value.
	// +optional
	Map map[string]string `json:"map,omitempty"`
	// Array is an array value.
	// +optional
	Array []string `json:"array,omitempty"`
}

// ApplicationSourcePluginParameters is a list of plugin parameters.
type ApplicationSourcePluginParameters []ApplicationSourcePluginParameter
