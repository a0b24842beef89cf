package cmdutil

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/repo"
)

// AppSetPreview is the API server's ApplicationSet Generate: the
// ApplicationSet controller's generators run in the API server's process,
// reading Git through its repo server and cluster Secrets through its
// client, as Argo CD's API server runs them.
func AppSetPreview(git repo.GitLister, reader client.Reader, namespace string, scm applicationset.SCMPolicy) func(context.Context, *v1alpha1.ApplicationSet) ([]*v1alpha1.Application, error) {
	return applicationset.Previewer{Sources: applicationset.Sources{Git: git, Reader: reader, Namespace: namespace, SCM: scm}}.Preview
}

// The variables argocd-cmd-params-cm's applicationsetcontroller SCM keys
// set, read by the ApplicationSet controller and the API server alike.
const (
	EnvAllowedSCMProviders = "ARGOCD_APPLICATIONSET_CONTROLLER_ALLOWED_SCM_PROVIDERS"
	EnvEnableSCMProviders  = "ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_SCM_PROVIDERS"
	EnvTokenRefStrictMode  = "ARGOCD_APPLICATIONSET_CONTROLLER_TOKENREF_STRICT_MODE"
	EnvSCMRootCAPath       = "ARGOCD_APPLICATIONSET_CONTROLLER_SCM_ROOT_CA_PATH"
)

// SCMPolicyFromEnv reads the SCM policy from those variables: providers
// enabled unless "false", allowed addresses comma-separated.
func SCMPolicyFromEnv() (applicationset.SCMPolicy, error) {
	p := applicationset.SCMPolicy{RootCAPath: os.Getenv(EnvSCMRootCAPath)}
	for _, a := range strings.Split(os.Getenv(EnvAllowedSCMProviders), ",") {
		if a = strings.TrimSpace(a); a != "" {
			p.Allowed = append(p.Allowed, a)
		}
	}
	enabled, strict := true, false
	for env, into := range map[string]*bool{EnvEnableSCMProviders: &enabled, EnvTokenRefStrictMode: &strict} {
		v := os.Getenv(env)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return applicationset.SCMPolicy{}, fmt.Errorf("%s=%q: want true or false", env, v)
		}
		*into = b
	}
	p.Disabled, p.TokenRefStrict = !enabled, strict
	return p, nil
}
