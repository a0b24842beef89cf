// Package v1alpha1 holds the Go types of Capstan's custom resources,
// Application, AppProject and ApplicationSet in the API group argoproj.io/v1alpha1.
//
// The types keep Argo CD's field names and JSON shapes, so manifests written
// for Argo CD apply to Capstan unchanged and a cluster already managed by
// Argo CD can be read by Capstan as it is.
//
// Register the types with a scheme before using a client:
//
//	scheme := runtime.NewScheme()
//	_ = clientgoscheme.AddToScheme(scheme)
//	_ = v1alpha1.AddToScheme(scheme)
//	c, err := client.New(cfg, client.Options{Scheme: scheme})
//
// +kubebuilder:object:generate=true
// +groupName=argoproj.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// Group is the API group shared with Argo CD.
	Group = "argoproj.io"
	// Version is the only served version of the group.
	Version = "v1alpha1"

	// ApplicationKind is the kind of an Application.
	ApplicationKind = "Application"
	// AppProjectKind is the kind of an AppProject.
	AppProjectKind = "AppProject"
	// ApplicationSetKind is the kind of an ApplicationSet.
	ApplicationSetKind = "ApplicationSet"
)

var (
	// GroupVersion is argoproj.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds Application, AppProject and ApplicationSet to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// ApplicationGVK and AppProjectGVK name the two kinds for unstructured use.
var (
	ApplicationGVK = GroupVersion.WithKind(ApplicationKind)
	AppProjectGVK  = GroupVersion.WithKind(AppProjectKind)
	// ApplicationSetGVK names the ApplicationSet kind.
	ApplicationSetGVK = GroupVersion.WithKind(ApplicationSetKind)
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Application{}, &ApplicationList{},
		&AppProject{}, &AppProjectList{},
		&ApplicationSet{}, &ApplicationSetList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
