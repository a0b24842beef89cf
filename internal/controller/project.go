package controller

import (
	"context"
	"fmt"
	"slices"

	"github.com/gobwas/glob"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// checkProject refuses an Application its AppProject does not allow:
// a source repository outside sourceRepos, or a destination cluster
// (matched by server or name, whichever the project lists) and namespace
// outside destinations.
func (r *reconciler) checkProject(ctx context.Context, app *v1alpha1.Application, dst *cluster.Cluster) (*v1alpha1.AppProject, error) {
	proj := &v1alpha1.AppProject{}
	name := app.Spec.Project
	if name == "" {
		name = v1alpha1.DefaultAppProjectName
	}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: name}, proj); err != nil {
		return nil, fmt.Errorf("application references project %s which does not exist", name)
	}
	if app.Namespace != r.opts.Namespace && !matchesAny(proj.Spec.SourceNamespaces, app.Namespace, false) {
		return nil, fmt.Errorf("application '%s' in namespace '%s' is not permitted to use project '%s'", app.Name, app.Namespace, name)
	}
	for _, src := range app.Spec.GetSources() {
		if !matchesAny(proj.Spec.SourceRepos, git.NormalizeURL(src.RepoURL), true) {
			return nil, fmt.Errorf("application repo %s is not permitted in project '%s'", git.RedactURL(src.RepoURL), name)
		}
	}
	d := app.Spec.Destination
	for _, allowed := range proj.Spec.Destinations {
		serverOK := (allowed.Server == "" && allowed.Name == "") ||
			(allowed.Server != "" && globMatch(allowed.Server, dst.Server)) ||
			(allowed.Name != "" && globMatch(allowed.Name, dst.Name))
		if serverOK && globMatch(orStar(allowed.Namespace), d.Namespace) {
			return proj, nil
		}
	}
	return nil, fmt.Errorf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
		firstNonEmpty(d.Server, d.Name), d.Namespace, name)
}

// allowed reports whether the project permits an object and the
// destination cluster manages it: a cluster Secret that lists namespaces
// limits Capstan to them, and to no cluster-scoped objects unless it sets
// clusterResources.
func allowed(proj *v1alpha1.AppProject, c *cluster.Cluster, obj *unstructured.Unstructured, namespaced bool) error {
	if err := permitted(proj, obj, namespaced); err != nil {
		return err
	}
	if len(c.Namespaces) == 0 {
		return nil
	}
	if !namespaced {
		if !c.ClusterResources {
			return fmt.Errorf("cluster level %s %q can not be managed when in namespaced mode", obj.GetKind(), obj.GetName())
		}
		return nil
	}
	if !slices.Contains(c.Namespaces, obj.GetNamespace()) {
		return fmt.Errorf("namespace %q for %s %q is not managed", obj.GetNamespace(), obj.GetKind(), obj.GetName())
	}
	return nil
}

// permitted reports whether a project lets its Applications manage an
// object, as Argo CD decides: a cluster-scoped kind must be in
// clusterResourceWhitelist (empty allows none) and not in
// clusterResourceBlacklist; a namespaced kind must be in
// namespaceResourceWhitelist when that is set, and not in
// namespaceResourceBlacklist. Groups, kinds and names are globs.
func permitted(proj *v1alpha1.AppProject, obj *unstructured.Unstructured, namespaced bool) error {
	gvk := obj.GroupVersionKind()
	gkMatch := func(group, kind string) bool {
		return globMatch(orStar(group), gvk.Group) && globMatch(orStar(kind), gvk.Kind)
	}
	anyGK := func(list []metav1.GroupKind) bool {
		for _, gk := range list {
			if gkMatch(gk.Group, gk.Kind) {
				return true
			}
		}
		return false
	}
	anyCluster := func(list []v1alpha1.ClusterResourceRestrictionItem) bool {
		for _, it := range list {
			if gkMatch(it.Group, it.Kind) && globMatch(orStar(it.Name), obj.GetName()) {
				return true
			}
		}
		return false
	}
	ok := true
	if namespaced {
		ok = (len(proj.Spec.NamespaceResourceWhitelist) == 0 || anyGK(proj.Spec.NamespaceResourceWhitelist)) &&
			!anyGK(proj.Spec.NamespaceResourceBlacklist)
	} else {
		ok = anyCluster(proj.Spec.ClusterResourceWhitelist) && !anyCluster(proj.Spec.ClusterResourceBlacklist)
	}
	if !ok {
		return fmt.Errorf("resource %s:%s is not permitted in project %s", gvk.Group, gvk.Kind, proj.Name)
	}
	return nil
}

func matchesAny(patterns []string, value string, normalize bool) bool {
	for _, p := range patterns {
		if normalize && p != "*" {
			p = git.NormalizeURL(p)
		}
		if globMatch(p, value) {
			return true
		}
	}
	return false
}

func globMatch(pattern, value string) bool {
	if pattern == value || pattern == "*" {
		return true
	}
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		return false
	}
	return g.Match(value)
}

func orStar(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
