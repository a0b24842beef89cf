// Package project decides what an AppProject permits, as Argo CD does:
// which repositories an Application's sources may come from, which
// destination clusters and namespaces it may deploy to, from which
// namespaces it may be created, and which kinds of object it may manage.
// The controller checks each comparison with it; the API server checks
// each Application it is asked to create or change.
package project

import (
	"fmt"

	"github.com/gobwas/glob"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// Destination is an Application's destination cluster, known by both its
// server URL and its name, and namespace.
type Destination struct {
	Server, Name, Namespace string
}

// CheckApplication refuses an Application its project does not allow: one
// created outside the control namespace that the project's
// sourceNamespaces do not list, a source repository outside sourceRepos,
// or a destination outside destinations (matched by server or name,
// whichever the project lists). The errors are Argo CD's messages.
func CheckApplication(proj *v1alpha1.AppProject, app *v1alpha1.Application, controlNamespace string, dest Destination) error {
	name := proj.Name
	if app.Namespace != controlNamespace && !MatchesAny(proj.Spec.SourceNamespaces, app.Namespace, false) {
		return fmt.Errorf("application '%s' in namespace '%s' is not permitted to use project '%s'", app.Name, app.Namespace, name)
	}
	repos := []string{}
	for _, src := range app.Spec.GetSources() {
		repos = append(repos, src.RepoURL)
	}
	if h := app.Spec.SourceHydrator; h != nil {
		repos = append(repos, h.DrySource.RepoURL) // the sync source is among the sources
	}
	for _, repoURL := range repos {
		if !SourcePermitted(proj, repoURL) {
			return fmt.Errorf("application repo %s is not permitted in project '%s'", git.RedactURL(repoURL), name)
		}
	}
	if !DestinationPermitted(proj, dest) {
		server := dest.Server
		if server == "" {
			server = dest.Name
		}
		return fmt.Errorf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
			server, dest.Namespace, name)
	}
	return nil
}

// SourcePermitted reports whether the project's sourceRepos allow a
// repository.
func SourcePermitted(proj *v1alpha1.AppProject, repoURL string) bool {
	return MatchesAny(proj.Spec.SourceRepos, git.NormalizeURL(repoURL), true)
}

// DestinationPermitted reports whether one of the project's destinations
// matches the cluster (by server or name) and namespace.
func DestinationPermitted(proj *v1alpha1.AppProject, dest Destination) bool {
	for _, allowed := range proj.Spec.Destinations {
		serverOK := (allowed.Server == "" && allowed.Name == "") ||
			(allowed.Server != "" && GlobMatch(allowed.Server, dest.Server)) ||
			(allowed.Name != "" && GlobMatch(allowed.Name, dest.Name))
		if serverOK && GlobMatch(OrStar(allowed.Namespace), dest.Namespace) {
			return true
		}
	}
	return false
}

// Permits reports whether a project lets its Applications manage an
// object in the cluster (by server and name; its Namespace is not used): a
// cluster-scoped kind must be in clusterResourceWhitelist (empty allows
// none) and not in clusterResourceBlacklist; a namespaced kind must be in
// namespaceResourceWhitelist when that is set, and not in
// namespaceResourceBlacklist, and its namespace one of the project's
// destinations in that cluster, whatever namespace the Application itself
// deploys to. Groups, kinds and names are globs. The errors are Argo CD's.
func Permits(proj *v1alpha1.AppProject, obj *unstructured.Unstructured, namespaced bool, cluster Destination) error {
	if err := KindPermitted(proj, obj, namespaced); err != nil {
		return err
	}
	if namespaced && !DestinationPermitted(proj, Destination{Server: cluster.Server, Name: cluster.Name, Namespace: obj.GetNamespace()}) {
		return fmt.Errorf("namespace %s is not permitted in project '%s'", obj.GetNamespace(), proj.Name)
	}
	return nil
}

// KindPermitted is Permits' check of the object's kind (and, for a
// cluster-scoped one, its name) alone.
func KindPermitted(proj *v1alpha1.AppProject, obj *unstructured.Unstructured, namespaced bool) error {
	gvk := obj.GroupVersionKind()
	gkMatch := func(group, kind string) bool {
		return GlobMatch(OrStar(group), gvk.Group) && GlobMatch(OrStar(kind), gvk.Kind)
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
			if gkMatch(it.Group, it.Kind) && GlobMatch(OrStar(it.Name), obj.GetName()) {
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

// MatchesAny reports whether value matches one of the glob patterns;
// with normalize, patterns and value are repository URLs compared as
// Argo CD compares them.
func MatchesAny(patterns []string, value string, normalize bool) bool {
	for _, p := range patterns {
		if normalize && p != "*" {
			p = git.NormalizeURL(p)
		}
		if GlobMatch(p, value) {
			return true
		}
	}
	return false
}

// GlobMatch matches value against a glob whose '*' stops at '/'.
func GlobMatch(pattern, value string) bool {
	if pattern == value || pattern == "*" {
		return true
	}
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		return false
	}
	return g.Match(value)
}

// OrStar is "*" for an empty pattern, which matches anything.
func OrStar(s string) string {
	if s == "" {
		return "*"
	}
	return s
}
