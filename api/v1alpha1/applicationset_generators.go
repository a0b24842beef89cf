package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationSetGenerator is one entry of spec.generators: exactly one
// generator, with an optional selector over the parameter sets it yields.
type ApplicationSetGenerator struct {
	ApplicationSetTerminalGenerator `json:",inline"`
	// +optional
	Matrix *MatrixGenerator `json:"matrix,omitempty"`
	// +optional
	Merge *MergeGenerator `json:"merge,omitempty"`
}

// ApplicationSetNestedGenerator is a generator inside a matrix or merge
// generator. A matrix or merge one level further down is kept as raw JSON,
// as in Argo CD's schema, and read when it is run.
type ApplicationSetNestedGenerator struct {
	ApplicationSetTerminalGenerator `json:",inline"`
	// +optional
	Matrix *apiextensionsv1.JSON `json:"matrix,omitempty"`
	// +optional
	Merge *apiextensionsv1.JSON `json:"merge,omitempty"`
}

// ApplicationSetTerminalGenerator holds the generators that do not nest.
type ApplicationSetTerminalGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// +optional
	Git *GitGenerator `json:"git,omitempty"`
	// +optional
	SCMProvider *SCMProviderGenerator `json:"scmProvider,omitempty"`
	// +optional
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// +optional
	PullRequest *PullRequestGenerator `json:"pullRequest,omitempty"`
	// +optional
	Plugin *PluginGenerator `json:"plugin,omitempty"`
	// +optional
	OCI *OCIGenerator `json:"oci,omitempty"`
	// Selector keeps only the parameter sets whose values match.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ListGenerator yields its elements, each a parameter set.
type ListGenerator struct {
	// +optional
	Elements []apiextensionsv1.JSON `json:"elements,omitempty"`
	// ElementsYaml is a YAML list of elements, usually templated from an
	// outer matrix generator's parameters.
	// +optional
	ElementsYaml string `json:"elementsYaml,omitempty"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// ClusterGenerator yields one parameter set per cluster Secret (and the
// local cluster unless a selector is given).
type ClusterGenerator struct {
	// +optional
	Selector metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// Values are extra parameters, available as values.<key>.
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// FlatList yields one parameter set holding all clusters as "clusters".
	// +optional
	FlatList bool `json:"flatList,omitempty"`
}

// GitGenerator yields parameter sets from a Git repository's directories
// or from the contents of its JSON/YAML files.
type GitGenerator struct {
	RepoURL string `json:"repoURL"`
	// +optional
	Directories []GitDirectoryGeneratorItem `json:"directories,omitempty"`
	// +optional
	Files    []GitFileGeneratorItem `json:"files,omitempty"`
	Revision string                 `json:"revision"`
	// RequeueAfterSeconds overrides the default re-poll period (3 minutes).
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// PathParamPrefix prefixes the path parameters, for matrices of two Git generators.
	// +optional
	PathParamPrefix string `json:"pathParamPrefix,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// OCIGenerator yields parameter sets from an OCI artifact's directories
// or from the contents of its JSON/YAML files, as the Git generator does
// from a commit (Argo CD 3.6). RepoURL is an oci:// reference; Revision
// a tag, a digest or a semver constraint.
type OCIGenerator struct {
	RepoURL string `json:"repoURL"`
	// +optional
	Directories []GitDirectoryGeneratorItem `json:"directories,omitempty"`
	// +optional
	Files    []GitFileGeneratorItem `json:"files,omitempty"`
	Revision string                 `json:"revision"`
	// RequeueAfterSeconds overrides the default re-poll period (3 minutes).
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// PathParamPrefix prefixes the path parameters.
	// +optional
	PathParamPrefix string `json:"pathParamPrefix,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// GitDirectoryGeneratorItem is a directory glob, included or excluded.
type GitDirectoryGeneratorItem struct {
	Path string `json:"path"`
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// GitFileGeneratorItem is a file glob, included or excluded.
type GitFileGeneratorItem struct {
	Path string `json:"path"`
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// DuckTypeGenerator yields clusters from the status of a custom resource
// named by the ConfigMap configMapRef (Open Cluster Management's placement
// decisions and similar).
type DuckTypeGenerator struct {
	ConfigMapRef string `json:"configMapRef"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// PluginGenerator asks an HTTP service, named by a ConfigMap, for parameter sets.
type PluginGenerator struct {
	ConfigMapRef PluginConfigMapRef `json:"configMapRef"`
	// +optional
	Input PluginInput `json:"input,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// PluginConfigMapRef names the ConfigMap holding a plugin's baseUrl and token.
type PluginConfigMapRef struct {
	Name string `json:"name"`
}

// PluginInput is what a plugin generator sends to its service.
type PluginInput struct {
	// +optional
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`
}

// MatrixGenerator combines the parameter sets of two generators, every
// set of the first with every set of the second.
type MatrixGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// MergeGenerator merges the parameter sets of later generators into those
// of the first whose mergeKeys values agree.
type MergeGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	MergeKeys  []string                        `json:"mergeKeys"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}
