package engine

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// CompareOptions are an object's argocd.argoproj.io/compare-options, a
// comma-separated list; options Capstan does not act on are ignored, as
// Argo CD ignores unknown ones. ServerSideDiff=true and
// IncludeMutationWebhook=true name what Capstan always does: every
// comparison is against a server-side dry-run apply, whose result includes
// what mutating webhooks would change.
type CompareOptions struct {
	// IgnoreExtraneous keeps a live object that is no longer rendered
	// (one to prune) out of its Application's sync status; it is still
	// listed, and pruned by a sync that prunes.
	IgnoreExtraneous bool
}

// CompareOptionsOf reads obj's compare options.
func CompareOptionsOf(obj *unstructured.Unstructured) CompareOptions {
	var o CompareOptions
	for _, item := range strings.Split(obj.GetAnnotations()[v1alpha1.AnnotationCompareOptions], ",") {
		switch strings.TrimSpace(item) {
		case "IgnoreExtraneous":
			o.IgnoreExtraneous = true
		}
	}
	return o
}
