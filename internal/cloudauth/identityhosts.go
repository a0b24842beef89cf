package cloudauth

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ErrIdentityHost refuses to send a token bought with the process's own
// Azure identity to a host that is not Azure's: whoever may add a
// repository could otherwise have it sent anywhere.
var ErrIdentityHost = errors.New("the Azure workload identity's tokens go only to Azure hosts")

// azureDevOpsHosts take the identity's Azure DevOps token (a host, or a
// suffix starting with a dot).
var azureDevOpsHosts = []string{"dev.azure.com", ".visualstudio.com"}

// containerRegistryHosts take the identity's token in exchange for a
// registry's (the public, China and US Government clouds).
var containerRegistryHosts = []string{".azurecr.io", ".azurecr.cn", ".azurecr.us"}

// identityHostAllowed refuses a repository the process's Azure identity
// may not buy a token for: an Azure DevOps host for Git, an Azure
// Container Registry for Helm, or a host Options.AzureIdentityHosts lists.
func (s *Source) identityHostAllowed(repoURL string, registry bool) error {
	host := strings.ToLower(HostOf(repoURL))
	allowed := azureDevOpsHosts
	if registry {
		allowed = containerRegistryHosts
	}
	if host != "" && (matchesHost(allowed, host) || slices.Contains(s.opts.AzureIdentityHosts, host)) {
		return nil
	}
	return fmt.Errorf("%w: %q is not one of %s", ErrIdentityHost, host, strings.Join(allowed, ", "))
}

func matchesHost(patterns []string, host string) bool {
	for _, p := range patterns {
		if host == p || (strings.HasPrefix(p, ".") && strings.HasSuffix(host, p)) {
			return true
		}
	}
	return false
}

// HostOf is the host name of a repository URL, with or without its scheme
// (https://dev.azure.com/org/p/_git/r, oci://reg.azurecr.io/charts,
// reg.azurecr.io/charts, git@ssh.dev.azure.com:v3/org/p/r).
func HostOf(repoURL string) string {
	if u, err := url.Parse(repoURL); err == nil && u.Host != "" {
		return u.Hostname()
	}
	rest := repoURL
	if _, after, ok := strings.Cut(rest, "@"); ok {
		rest = after
	}
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, ":")
	return host
}
