package settings

import (
	"fmt"

	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"
)

// The argocd-cm keys of the kinds Capstan watches, compares and syncs.
const (
	ResourceExclusionsKey = "resource.exclusions"
	ResourceInclusionsKey = "resource.inclusions"
)

// FilteredResource is one rule of resource.exclusions or
// resource.inclusions: the API groups, kinds and cluster URLs it matches
// (globs; an empty list matches every one).
type FilteredResource struct {
	APIGroups []string `json:"apiGroups,omitempty"`
	Kinds     []string `json:"kinds,omitempty"`
	Clusters  []string `json:"clusters,omitempty"`
}

// neverWatched are the kinds left out whatever argocd-cm says, as Argo
// CD leaves them out: events and metrics.
var neverWatched = []FilteredResource{
	{APIGroups: []string{"events.k8s.io", "metrics.k8s.io"}},
	{APIGroups: []string{""}, Kinds: []string{"Event"}},
}

// ResourceFilter says which kinds are left out: never watched, so never
// shown or pruned, and not synced when rendered (a warning says so).
type ResourceFilter struct {
	exclusions, inclusions []compiledRule
}

type compiledRule struct{ groups, kinds, clusters []*glob.Pattern }

// ResourceFilter reads resource.exclusions and resource.inclusions. A
// list that cannot be read is an error: guessing which kinds to leave
// out could prune what was meant to be kept.
func (a *ArgoCD) ResourceFilter() (*ResourceFilter, error) {
	f := &ResourceFilter{}
	for _, list := range []struct {
		key string
		to  *[]compiledRule
		add []FilteredResource
	}{{ResourceExclusionsKey, &f.exclusions, neverWatched}, {ResourceInclusionsKey, &f.inclusions, nil}} {
		var rules []FilteredResource
		if err := yaml.UnmarshalStrict([]byte(a.Data[list.key]), &rules); err != nil {
			return nil, fmt.Errorf("argocd-cm %s: %w", list.key, err)
		}
		for _, r := range append(rules, list.add...) {
			c, err := compileRule(r)
			if err != nil {
				return nil, fmt.Errorf("argocd-cm %s: %w", list.key, err)
			}
			*list.to = append(*list.to, c)
		}
	}
	return f, nil
}

func compileRule(r FilteredResource) (compiledRule, error) {
	var c compiledRule
	for _, part := range []struct {
		patterns []string
		to       *[]*glob.Pattern
	}{{r.APIGroups, &c.groups}, {r.Kinds, &c.kinds}, {r.Clusters, &c.clusters}} {
		for _, p := range part.patterns {
			g, err := glob.Compile(p)
			if err != nil {
				return c, fmt.Errorf("pattern %q: %w", p, err)
			}
			*part.to = append(*part.to, g)
		}
	}
	return c, nil
}

func anyMatch(globs []*glob.Pattern, s string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if g.Match(s) {
			return true
		}
	}
	return false
}

func (c compiledRule) matches(group, kind, cluster string) bool {
	return anyMatch(c.groups, group) && anyMatch(c.kinds, kind) && anyMatch(c.clusters, cluster)
}

// Excluded reports whether the kind is left out on the cluster (its API
// server URL): an exclusion matches it, or inclusions are set and none
// matches it.
func (f *ResourceFilter) Excluded(group, kind, cluster string) bool {
	for _, r := range f.exclusions {
		if r.matches(group, kind, cluster) {
			return true
		}
	}
	if len(f.inclusions) == 0 {
		return false
	}
	for _, r := range f.inclusions {
		if r.matches(group, kind, cluster) {
			return false
		}
	}
	return true
}

// On is Excluded for one cluster.
func (f *ResourceFilter) On(cluster string) func(group, kind string) bool {
	return func(group, kind string) bool { return f.Excluded(group, kind, cluster) }
}
