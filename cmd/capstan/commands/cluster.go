package commands

import (
	"bufio"
	"cmp"
	"fmt"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/cluster"
)

func newClusterCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Manage destination clusters"}
	cmd.AddCommand(newClusterAddCommand(f), newClusterListCommand(f), newClusterGetCommand(f), newClusterRmCommand(f), newClusterRotateAuthCommand(f))
	return cmd
}

func clusterPath(server, suffix string) string {
	return "/api/v1/clusters/" + url.PathEscape(server) + suffix
}

func newClusterAddCommand(f *clientFlags) *cobra.Command {
	var kubeconfig, name, project string
	var namespaces []string
	var clusterResources, yes, upsert bool
	cmd := &cobra.Command{
		Use:   "add CONTEXT",
		Short: "Register the cluster of a kubeconfig context, creating the argocd-manager ServiceAccount there",
		Long: "Reads CONTEXT from the kubeconfig, creates ServiceAccount argocd-manager in kube-system with full\n" +
			"rights (ClusterRole argocd-manager-role and ClusterRoleBinding argocd-manager-role-binding, or a Role and\n" +
			"RoleBinding in each --namespace), a long-lived token Secret, and registers the cluster with that token.",
		Example: "  capstan cluster add prod-admin@prod\n  capstan cluster add staging --name staging --namespace web --namespace api --yes",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			if kubeconfig != "" {
				rules.ExplicitPath = kubeconfig
			}
			cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: args[0]}).ClientConfig()
			if err != nil {
				return fmt.Errorf("kubeconfig context %q: %w", args[0], err)
			}
			if !yes {
				fmt.Fprintf(cmd.OutOrStdout(), "WARNING: This will create a service account `%s` on the cluster referenced by context `%s` with full %s level admin privileges. Do you want to continue [y/N]? ",
					cluster.ManagerServiceAccount, args[0], map[bool]string{true: "cluster", false: "namespace"}[len(namespaces) == 0])
				answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
					return fmt.Errorf("cluster add of %s cancelled", args[0])
				}
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			token, err := cluster.InstallManager(cmd.Context(), cs, namespaces, func(msg string) { fmt.Fprintln(cmd.ErrOrStderr(), "INFO", msg) })
			if err != nil {
				return fmt.Errorf("preparing cluster %s: %w", cfg.Host, err)
			}
			caData, err := caOf(cfg)
			if err != nil {
				return err
			}
			spec := cluster.Spec{
				Server: strings.TrimSuffix(cfg.Host, "/"), Name: cmp.Or(name, args[0]), Namespaces: namespaces, ClusterResources: clusterResources, Project: project,
				Config: cluster.Config{BearerToken: token, TLSClientConfig: cluster.TLSClientConfig{Insecure: cfg.Insecure, ServerName: cfg.ServerName, CAData: caData}},
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.Do("POST", fmt.Sprintf("/api/v1/clusters?upsert=%t", upsert), spec, nil); err != nil {
				return fmt.Errorf("registering cluster %s: %w", spec.Server, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' added\n", spec.Server)
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().StringVar(&name, "name", "", "cluster name (default: the context's name)")
	cmd.Flags().StringArrayVar(&namespaces, "namespace", nil, "manage only this namespace, with a Role instead of a ClusterRole (repeatable)")
	cmd.Flags().BoolVar(&clusterResources, "cluster-resources", false, "with --namespace, still manage cluster-scoped resources")
	cmd.Flags().StringVar(&project, "project", "", "limit the cluster to one project")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace an existing cluster with different settings")
	return cmd
}

// caOf returns the CA certificates a client config trusts.
func caOf(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 || cfg.CAFile == "" {
		return cfg.CAData, nil
	}
	data, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's CA file: %w", err)
	}
	return data, nil
}

func newClusterListCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List clusters (credentials are never shown)",
		Example: "  capstan cluster list\n  capstan cluster list -o json",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			var resp struct{ Items []cluster.Spec }
			if err := c.Do("GET", "/api/v1/clusters", nil, &resp); err != nil {
				return fmt.Errorf("listing clusters: %w", err)
			}
			if output != "wide" {
				return printObject(cmd.OutOrStdout(), resp.Items, output)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SERVER\tNAME\tNAMESPACES\tPROJECT")
			for _, s := range resp.Items {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Server, s.Name, strings.Join(s.Namespaces, ","), s.Project)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	return cmd
}

func newClusterGetCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "get SERVER",
		Short:   "Show one cluster",
		Example: "  capstan cluster get https://kubernetes.default.svc",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			var spec cluster.Spec
			if err := c.Do("GET", clusterPath(args[0], ""), nil, &spec); err != nil {
				return fmt.Errorf("getting cluster %s: %w", args[0], err)
			}
			return printObject(cmd.OutOrStdout(), spec, output)
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: json or yaml")
	return cmd
}

func newClusterRmCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "rm SERVER",
		Short:   "Remove a cluster (its argocd-manager ServiceAccount stays)",
		Example: "  capstan cluster rm https://prod.example.com:6443",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if err := c.Do("DELETE", clusterPath(args[0], ""), nil, nil); err != nil {
				return fmt.Errorf("removing cluster %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' removed\n", args[0])
			return nil
		}),
	}
}

func newClusterRotateAuthCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "rotate-auth SERVER",
		Short:   "Issue a new argocd-manager token for a cluster and revoke the old one",
		Example: "  capstan cluster rotate-auth https://prod.example.com:6443",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if err := c.Do("POST", clusterPath(args[0], "/rotate-auth"), nil, nil); err != nil {
				return fmt.Errorf("rotating the credentials of cluster %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' rotated auth\n", args[0])
			return nil
		}),
	}
}
