package applicationset

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

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
	// RequeueAfter is how often the git and clusterDecisionResource
	// generators run again when they name no period
	// (applicationsetcontroller.requeue.after). Default DefaultRequeueAfter.
	RequeueAfter time.Duration
	// SCM is what the settings allow the SCM provider and pull request
	// generators.
	SCM SCMPolicy
	// Endpoints override the addresses of hosted providers whose
	// generators name none. Default: the providers' own.
	Endpoints Endpoints
	// CountGitHub, if set, wraps the transport of the GitHub API calls an
	// ApplicationSet's generators make, to count them (Argo CD's
	// argocd_github_api_* metrics). Default: not counted.
	CountGitHub func(next http.RoundTripper, namespace, name string) http.RoundTripper
}

// Endpoints are addresses of hosted providers' APIs, for tests and for
// private mirrors of those APIs.
type Endpoints struct {
	// BitbucketCloud is the Bitbucket Cloud API the bitbucket SCM
	// provider reaches. Default https://api.bitbucket.org/2.0.
	BitbucketCloud string
	// AWS is the endpoint of CodeCommit, the Resource Groups Tagging API
	// and STS for the awsCodeCommit SCM provider. Default: AWS's own.
	AWS string
}

// SCMPolicy is what the settings allow the SCM provider and pull request
// generators, as argocd-cmd-params-cm's applicationsetcontroller keys say.
type SCMPolicy struct {
	// Disabled refuses both generators (enable.scm.providers: false).
	// Default false: enabled, as in Argo CD.
	Disabled bool
	// Allowed lists the API addresses a generator may name
	// (allowed.scm.providers); a generator naming none (the hosted
	// service) is always allowed. Default empty: any.
	Allowed []string
	// TokenRefStrict reads a tokenRef's Secret only when it is labelled
	// argocd.argoproj.io/secret-type: scm-creds
	// (enable.tokenref.strict.mode). Default false.
	TokenRefStrict bool
	// RootCAPath is a PEM file of extra roots trusted when reaching
	// providers (scm.root.ca.path). Default none: the system's roots.
	RootCAPath string
}

// ErrSCMProvidersDisabled is the error of an SCM provider or pull request
// generator while SCMPolicy.Disabled.
var ErrSCMProvidersDisabled = errors.New("scm providers are disabled")

// allows checks a provider's API address against the policy.
func (p SCMPolicy) allows(api string) error {
	if p.Disabled {
		return ErrSCMProvidersDisabled
	}
	if api == "" || len(p.Allowed) == 0 || slices.Contains(p.Allowed, api) {
		return nil
	}
	return fmt.Errorf("scm provider %q not allowed, must use one of the following: %s", api, strings.Join(p.Allowed, ", "))
}
