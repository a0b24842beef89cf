package cloudauth

import "context"

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

// Buy buys a repository's credentials, in Argo CD's order: a Google
// service account's, then the Azure workload identity's, then an Azure
// service principal's. helmRegistry, for a Helm repository, is its host:
// the workload identity's token is then exchanged for the Azure Container
// Registry's. Credentials that buy nothing give a zero Bought.
func (s *Source) Buy(ctx context.Context, c Credentials, helmRegistry string) (Bought, error) {
	var b Bought
	var err error
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
