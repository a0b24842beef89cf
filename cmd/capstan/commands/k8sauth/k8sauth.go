// Package k8sauth is capstan k8s-auth (argocd-k8s-auth, as Argo CD's image
// names it): a kubeconfig exec credential plugin that prints a token of
// a managed Kubernetes service for the environment's cloud identity. A
// cluster Secret's awsAuthConfig runs its aws command, and an
// execProviderConfig may name any of them.
package k8sauth

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientauthv1beta1 "k8s.io/client-go/pkg/apis/clientauthentication/v1beta1"

	"github.com/capstan-cd/capstan/internal/cloudauth"
)

// NewCommand returns the k8s-auth command and its aws, gcp and azure
// subcommands.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s-auth",
		Short: "Print a managed Kubernetes service's token, as a kubeconfig exec plugin",
		Args:  cobra.NoArgs,
	}
	var eks cloudauth.AWSCluster
	aws := &cobra.Command{
		Use:     "aws",
		Short:   "Print an EKS token signed with the environment's AWS credentials",
		Example: "  capstan k8s-auth aws --cluster-name prod --role-arn arn:aws:iam::123456789012:role/deployer",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printToken(cmd, func() (cloudauth.KubeToken, error) { return cloudauth.Default.EKS(cmd.Context(), eks) })
		},
	}
	aws.Flags().StringVar(&eks.ClusterName, "cluster-name", "", "the EKS cluster's name")
	aws.Flags().StringVar(&eks.RoleARN, "role-arn", "", "IAM role to assume first")
	aws.Flags().StringVar(&eks.Profile, "profile", "", "AWS shared configuration profile")
	gcp := &cobra.Command{
		Use:     "gcp",
		Short:   "Print a GKE token of the environment's Google credentials",
		Example: "  GOOGLE_APPLICATION_CREDENTIALS=key.json capstan k8s-auth gcp   # as a cluster Secret's execProviderConfig runs argocd-k8s-auth gcp",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printToken(cmd, func() (cloudauth.KubeToken, error) { return cloudauth.Default.GKE(cmd.Context()) })
		},
	}
	azure := &cobra.Command{
		Use:     "azure",
		Short:   "Print an AKS token of the environment's Azure workload identity (AAD_SERVER_APPLICATION_ID names the server app)",
		Example: "  capstan k8s-auth azure   # in a pod with Azure workload identity, as argocd-k8s-auth azure",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printToken(cmd, func() (cloudauth.KubeToken, error) { return cloudauth.Default.AKS(cmd.Context()) })
		},
	}
	cmd.AddCommand(aws, gcp, azure)
	return cmd
}

// printToken writes the token as the ExecCredential client-go reads.
func printToken(cmd *cobra.Command, get func() (cloudauth.KubeToken, error)) error {
	t, err := get()
	if err != nil {
		return err
	}
	cred := clientauthv1beta1.ExecCredential{
		TypeMeta: metav1.TypeMeta{APIVersion: clientauthv1beta1.SchemeGroupVersion.String(), Kind: "ExecCredential"},
		Status:   &clientauthv1beta1.ExecCredentialStatus{Token: t.Token},
	}
	if !t.Expires.IsZero() {
		expires := metav1.NewTime(t.Expires)
		cred.Status.ExpirationTimestamp = &expires
	}
	data, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), string(data))
	return err
}
