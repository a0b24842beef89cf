package applicationset

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/repo"
)

// Sources is what generators read besides the ApplicationSet itself.
type Sources struct {
	// Git lists what Git revisions hold: a repo server, in-process or remote.
	Git repo.GitLister
	// Reader reads cluster Secrets (usually from an informer cache).
	Reader client.Reader
	// Namespace is the control namespace holding cluster Secrets.
	Namespace string
	// PathAwareGlobs makes "*" in Git file patterns stop at "/" and "**"
	// cross directories (Argo CD's --enable-new-git-file-globbing).
	// Default false: "*" matches "/" too, as in a git pathspec.
	PathAwareGlobs bool
}
