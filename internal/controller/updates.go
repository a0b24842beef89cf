package controller

import (
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/diff"
)

// updateFilter decides which live updates refresh their Application:
// argocd-cm's ignoreResourceUpdates, as the last read of argocd-cm set it.
// Until then, and with resource.ignoreResourceUpdatesEnabled "false",
// every update does.
type updateFilter struct {
	rules atomic.Pointer[[]v1alpha1.ResourceIgnoreDifferences]
	// jqTimeout bounds each jq path expression (Options.IgnoreJQTimeout).
	jqTimeout time.Duration
}

// set replaces the rules; nil turns the filter off.
func (f *updateFilter) set(rules []v1alpha1.ResourceIgnoreDifferences) {
	if rules == nil {
		f.rules.Store(nil)
		return
	}
	f.rules.Store(&rules)
}

// ignore reports whether the update from old to o changed only fields the
// rules leave out.
func (f *updateFilter) ignore(old, o *unstructured.Unstructured) bool {
	rules := f.rules.Load()
	return rules != nil && diff.Unchanged(old, o, *rules, f.jqTimeout)
}
