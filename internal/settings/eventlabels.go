package settings

import (
	"github.com/gobwas/glob"
)

// EventLabels are the labels an Event recorded for an Application carries,
// as Argo CD gives them: of the Application's labels, and its project's
// where the Application has no label of that key, those whose key matches
// a resource.includeEventLabelKeys pattern and none of
// resource.excludeEventLabelKeys. Nil when none: an Event carries no
// labels unless asked.
func (a *ArgoCD) EventLabels(appLabels, projectLabels map[string]string) map[string]string {
	include, exclude := a.EventLabelKeys()
	if len(include) == 0 {
		return nil
	}
	var out map[string]string
	keep := func(k, v string) {
		if _, seen := out[k]; seen || !matchesAny(include, k) || matchesAny(exclude, k) {
			return
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	for k, v := range appLabels {
		keep(k, v)
	}
	for k, v := range projectLabels {
		if _, own := appLabels[k]; !own {
			keep(k, v)
		}
	}
	return out
}

// matchesAny says whether s matches one of the glob patterns; a pattern
// that does not compile matches only itself.
func matchesAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if g, err := glob.Compile(p); err == nil && g.Match(s) || p == s {
			return true
		}
	}
	return false
}
