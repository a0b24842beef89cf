// Package cloudauth buys short-lived tokens from cloud identity services
// for repository credentials, as Argo CD's repository Secrets ask:
//
//   - gcpServiceAccountKey: a Google service account key (JSON) is
//     exchanged for an OAuth2 access token (scope cloud-platform); Git
//     sends the account's e-mail and the token as basic auth.
//   - azureServicePrincipalClientId/Secret/TenantId (with an optional
//     azureActiveDirectoryEndpoint): a Microsoft Entra ID token for Azure
//     DevOps, bought with the client secret.
//   - useAzureWorkloadIdentity: the same token bought with the pod's
//     Azure identity (workload identity or managed identity, as the Azure
//     SDK's default credential finds it); for a Helm repository in an
//     Azure Container Registry, that identity's token is exchanged for the
//     registry's refresh token.
//
// Tokens are cached until shortly before they expire; the Sources keep the
// credentials they built, keyed by a digest of their inputs.
//
// It also makes the tokens managed Kubernetes services take, for capstan
// k8s-auth: an EKS token (an STS GetCallerIdentity request presigned with
// the environment's AWS credentials, for a cluster Secret's
// awsAuthConfig), a GKE token and an AKS token.
package cloudauth
