// Package v1alpha1 holds the Go types of the ImageUpdater custom resource,
// API group argocd-image-updater.argoproj.io/v1alpha1: the configuration
// of Argo CD Image Updater from its release 1.0 on, which Capstan's image
// updater reads with the same field names and meaning.
//
// An ImageUpdater selects Applications of its own namespace by a name
// pattern and labels, and says which images of them to keep current, how
// each picks its next tag and where new tags are written. Settings are
// given at three levels, each overriding the one above: the whole object
// (spec), one application reference, one image.
//
// +kubebuilder:object:generate=true
// +groupName=argocd-image-updater.argoproj.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// Group is Argo CD Image Updater's API group.
	Group = "argocd-image-updater.argoproj.io"
	// Version is the group's only version.
	Version = "v1alpha1"
	// Kind is the kind of an ImageUpdater.
	Kind = "ImageUpdater"
)

var (
	// GroupVersion is argocd-image-updater.argoproj.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}
	// GVK names the ImageUpdater kind.
	GVK = GroupVersion.WithKind(Kind)

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds ImageUpdater and ImageUpdaterList to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &ImageUpdater{}, &ImageUpdaterList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
