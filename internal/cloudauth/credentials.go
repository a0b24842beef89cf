package cloudauth

import (
	"context"
	"strings"
)

// Credentials are the cloud credentials of one repository, as its Secret
// gives them.
type Credentials struct {
	// GoogleKey is a Google service account key (JSON).
	GoogleKey string `json:"googleKey,omitempty"`
	// AzureWorkloadIdentity buys tokens with the process's own Azure
	// identity.
	AzureWorkloadIdentity bool `json:"azureWorkloadIdentity,omitempty"`
	// ServicePrincipal buys tokens with a client secret, when Complete.
	ServicePrincipal ServicePrincipal `json:"servicePrincipal,omitzero"`
}

// Any reports whether the credentials can buy a token.
func (c Credentials) Any() bool {
	return c.GoogleKey != "" || c.AzureWorkloadIdentity || c.ServicePrincipal.Complete()
}

// Bought is what Credentials bought: a user and password (Google, an
// Azure Container Registry) or a bearer token (Azure DevOps), and who
// they are, which stays the same while the token is renewed.
type Bought struct {
	Username, Password, BearerToken string
	Identity                        string
}

// Buy buys the credentials of the repository at repoURL, in Argo CD's
// order: a Google service account's, then the Azure workload identity's,
// then an Azure service principal's. For a Helm repository (helm), the
// workload identity's token is exchanged for its Azure Container
// Registry's. The workload identity buys only for Azure's hosts (see
// ErrIdentityHost). Credentials that buy nothing give a zero Bought.
func (s *Source) Buy(ctx context.Context, c Credentials, repoURL string, helm bool) (Bought, error) {
	var b Bought
	var err error
	helmRegistry := ""
	if helm {
		helmRegistry = registryHost(repoURL)
	}
	if c.GoogleKey == "" && c.AzureWorkloadIdentity {
		if err := s.identityHostAllowed(repoURL, helm); err != nil {
			return Bought{}, err
		}
	}
	switch sp := c.ServicePrincipal; {
	case c.GoogleKey != "":
		b.Username, b.Password, err = s.Google(ctx, c.GoogleKey)
		b.Identity = "google/" + b.Username
	case c.AzureWorkloadIdentity && helmRegistry != "":
		b.Username, b.Identity = AzureEmptyUser, "azure-workload-identity"
		b.Password, err = s.AzureContainerRegistry(ctx, helmRegistry)
	case c.AzureWorkloadIdentity:
		b.Identity = "azure-workload-identity"
		b.BearerToken, err = s.AzureWorkloadIdentity(ctx, AzureDevOpsScope)
	case sp.Complete():
		b.Identity = "azure-service-principal/" + sp.TenantID + "/" + sp.ClientID
		b.BearerToken, err = s.AzureServicePrincipal(ctx, sp)
	}
	if err != nil {
		return Bought{}, err
	}
	return b, nil
}

// registryHost is the host[:port] of a Helm repository's URL, with or
// without its scheme (oci://registry/charts, https://registry/helm/v1/repo,
// registry/charts).
func registryHost(repoURL string) string {
	if _, rest, ok := strings.Cut(repoURL, "://"); ok {
		repoURL = rest
	}
	host, _, _ := strings.Cut(repoURL, "/")
	return host
}
