// Package applicationset is Capstan's ApplicationSet controller: it turns
// each ApplicationSet into Applications, as Argo CD's does.
//
// Generators (list, clusters, git, matrix, merge) yield parameter sets;
// each set is rendered into the ApplicationSet's template — with Argo CD's
// {{param}} substitution, or with Go's text/template and Sprig when
// goTemplate is set — and the resulting Applications are created, updated
// and deleted as spec.syncPolicy allows. Generated Applications carry an
// owner reference to their ApplicationSet, so deleting it deletes them.
//
// The package knows no HTTP and renders nothing itself: Git generators ask
// a repo server (repo.GitLister) what a revision holds.
package applicationset
