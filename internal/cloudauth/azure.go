package cloudauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// AzureDevOpsScope is the scope of the Microsoft Entra ID tokens Git
// sends to Azure DevOps (its well-known resource ID).
const AzureDevOpsScope = "499b84ac-1321-427f-aa17-267ca6975798/.default"

// AzureEmptyUser is the user name Azure sends with a token where a user
// name is asked for (an Azure Container Registry's refresh token).
const AzureEmptyUser = "00000000-0000-0000-0000-000000000000"

// ServicePrincipal are an Azure service principal's credentials, as a
// repository Secret's azureServicePrincipal* keys give them.
type ServicePrincipal struct {
	TenantID, ClientID, ClientSecret string
	// Endpoint is the Microsoft Entra ID authority host. Default:
	// https://login.microsoftonline.com (Azure's public cloud).
	Endpoint string
}

// Complete reports whether the three credentials are all given, the way
// Argo CD decides a repository uses a service principal.
func (sp ServicePrincipal) Complete() bool {
	return sp.TenantID != "" && sp.ClientID != "" && sp.ClientSecret != ""
}

// AzureServicePrincipal returns an Entra ID token for Azure DevOps, bought
// with the service principal's client secret.
func (s *Source) AzureServicePrincipal(ctx context.Context, sp ServicePrincipal) (string, error) {
	if !sp.Complete() {
		return "", errors.New("an Azure service principal needs its tenant ID, client ID and client secret")
	}
	key := strings.Join([]string{"azure-sp", sp.TenantID, sp.ClientID, sp.ClientSecret, sp.Endpoint}, "\x00")
	cred, err := remember(s, key, func() (azcore.TokenCredential, error) {
		opts := &azidentity.ClientSecretCredentialOptions{ClientOptions: s.clientOptions(sp.Endpoint)}
		opts.DisableInstanceDiscovery = !knownAuthority(opts.Cloud.ActiveDirectoryAuthorityHost)
		return azidentity.NewClientSecretCredential(sp.TenantID, sp.ClientID, sp.ClientSecret, opts)
	})
	if err != nil {
		return "", fmt.Errorf("getting a token as the Azure service principal %s: %w", sp.ClientID, err)
	}
	token, err := s.azureToken(ctx, cred, AzureDevOpsScope)
	if err != nil {
		return "", fmt.Errorf("getting a token as the Azure service principal %s: %w", sp.ClientID, err)
	}
	return token.Token, nil
}

// AzureWorkloadIdentity returns a token for scope bought with the pod's
// own Azure identity, found as the Azure SDK's default credential finds
// it (workload identity's AZURE_CLIENT_ID, AZURE_TENANT_ID and
// AZURE_FEDERATED_TOKEN_FILE first, then a managed identity).
func (s *Source) AzureWorkloadIdentity(ctx context.Context, scope string) (string, error) {
	token, err := s.workloadIdentity(ctx, scope)
	return token.Token, err
}

// workloadIdentity is AzureWorkloadIdentity's token with its expiry.
func (s *Source) workloadIdentity(ctx context.Context, scope string) (azcore.AccessToken, error) {
	env := make([]string, 0, 4)
	for _, name := range []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"} {
		env = append(env, os.Getenv(name))
	}
	cred, err := remember(s, "azure-wi\x00"+strings.Join(env, "\x00"), func() (azcore.TokenCredential, error) {
		opts := &azidentity.DefaultAzureCredentialOptions{ClientOptions: s.clientOptions("")}
		opts.DisableInstanceDiscovery = !knownAuthority(env[3])
		return azidentity.NewDefaultAzureCredential(opts)
	})
	if err != nil {
		return azcore.AccessToken{}, fmt.Errorf("getting a token as the Azure workload identity: %w", err)
	}
	token, err := s.azureToken(ctx, cred, scope)
	if err != nil {
		return azcore.AccessToken{}, fmt.Errorf("getting a token as the Azure workload identity: %w", err)
	}
	return token, nil
}

// azureToken asks cred for a token of scope (the credential keeps it until
// shortly before it expires), within the Source's timeout.
func (s *Source) azureToken(ctx context.Context, cred azcore.TokenCredential, scope string) (azcore.AccessToken, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	token, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}})
	if err != nil {
		var failed *azidentity.AuthenticationFailedError
		if errors.As(err, &failed) && failed.RawResponse != nil {
			// Not the answer's body: the endpoint may be the credentials'.
			return azcore.AccessToken{}, fmt.Errorf("the token endpoint answered %s", failed.RawResponse.Status)
		}
		return azcore.AccessToken{}, err
	}
	return token, nil
}

// clientOptions sends the Azure SDK's requests with the Source's client,
// to endpoint when one is given.
func (s *Source) clientOptions(endpoint string) azcore.ClientOptions {
	opts := azcore.ClientOptions{Transport: s.opts.HTTPClient}
	if endpoint != "" {
		opts.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: endpoint}
	}
	return opts
}

// knownAuthority reports whether host is one of Azure's clouds (empty:
// the public cloud), whose authorities Entra ID's instance discovery
// knows; any other is asked for its own metadata instead.
func knownAuthority(host string) bool {
	if host == "" {
		return true
	}
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	for _, c := range []cloud.Configuration{cloud.AzurePublic, cloud.AzureGovernment, cloud.AzureChina} {
		if known, err := url.Parse(c.ActiveDirectoryAuthorityHost); err == nil && strings.EqualFold(known.Host, u.Host) {
			return true
		}
	}
	return false
}
