package project

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Load reads the AppProject name in namespace as Applications are held to
// it: with what the global projects that select it (argocd-cm
// globalProjects) add merged in — Argo CD's virtual project. A missing
// project is a NotFound error.
func Load(ctx context.Context, r client.Reader, namespace, name string) (*v1alpha1.AppProject, error) {
	proj := &v1alpha1.AppProject{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, proj); err != nil {
		return nil, fmt.Errorf("reading AppProject/%s/%s: %w", namespace, name, err)
	}
	globals, err := Globals(ctx, r, proj)
	if err != nil {
		return nil, err
	}
	return WithGlobals(proj, globals...), nil
}

// Globals returns the global projects argocd-cm's globalProjects assigns
// to proj: each entry whose label selector matches proj's labels names
// one (never proj itself). An entry whose selector or project cannot be
// read is skipped.
func Globals(ctx context.Context, r client.Reader, proj *v1alpha1.AppProject) ([]*v1alpha1.AppProject, error) {
	cm, err := settings.LoadArgoCD(ctx, r, proj.Namespace)
	if err != nil {
		return nil, err
	}
	entries, err := cm.GlobalProjects()
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	var out []*v1alpha1.AppProject
	for _, gp := range entries {
		if gp.ProjectName == proj.Name || gp.LabelSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(gp.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(proj.Labels)) {
			continue
		}
		global := &v1alpha1.AppProject{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: proj.Namespace, Name: gp.ProjectName}, global); err != nil {
			continue
		}
		out = append(out, global)
	}
	return out, nil
}

// WithGlobals returns proj with the global projects' source repositories,
// source namespaces, destinations, resource allow and deny lists and sync
// windows added to its own, as Argo CD merges them; proj is not changed.
func WithGlobals(proj *v1alpha1.AppProject, globals ...*v1alpha1.AppProject) *v1alpha1.AppProject {
	if len(globals) == 0 {
		return proj
	}
	merged := proj.DeepCopy()
	s := &merged.Spec
	for _, g := range globals {
		gs := g.Spec.DeepCopy()
		s.SourceRepos = append(s.SourceRepos, gs.SourceRepos...)
		s.SourceNamespaces = append(s.SourceNamespaces, gs.SourceNamespaces...)
		s.Destinations = append(s.Destinations, gs.Destinations...)
		s.ClusterResourceWhitelist = append(s.ClusterResourceWhitelist, gs.ClusterResourceWhitelist...)
		s.ClusterResourceBlacklist = append(s.ClusterResourceBlacklist, gs.ClusterResourceBlacklist...)
		s.NamespaceResourceWhitelist = append(s.NamespaceResourceWhitelist, gs.NamespaceResourceWhitelist...)
		s.NamespaceResourceBlacklist = append(s.NamespaceResourceBlacklist, gs.NamespaceResourceBlacklist...)
		s.SyncWindows = append(s.SyncWindows, gs.SyncWindows...)
	}
	return merged
}
