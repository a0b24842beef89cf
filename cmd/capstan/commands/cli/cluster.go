package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/cluster"
)

func newClusterCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Manage destination clusters"}
	cmd.AddCommand(newClusterAddCommand(f), newClusterListCommand(f), newClusterGetCommand(f), newClusterRmCommand(f), newClusterRotateAuthCommand(f),
		newClusterSetCommand(f))
	return cmd
}

// clusterPath is the API path of the cluster at server, followed by sub.
func clusterPath(server, sub string) apiclient.Path {
	return apiclient.PathOf("/api/v1/clusters/{server}"+sub, server)
}

// clusterAddFlags are cluster add's options beyond the context.
type clusterAddFlags struct {
	kubeconfig, name, project, serviceAccount, systemNamespace, proxyURL, endpoint string
	serverProxyURL                                                                 string
	namespaces, labels, annotations                                                []string
	clusterResources, yes, upsert, inCluster, disableCompression                   bool
	shard                                                                          int64
	execCommand, execAPIVersion, execInstallHint                                   string
	execArgs                                                                       []string
	execEnv                                                                        map[string]string
	// aws, with a cluster name, reaches an EKS cluster with AWS credentials.
	aws cluster.AWSAuthConfig
	// bearerToken, when set, is used as it is; noToken registers none
	// (admin cluster generate-spec without --generate-bearer-token).
	bearerToken string
	noToken     bool
}

func newClusterAddCommand(f *clientFlags) *cobra.Command {
	o := &clusterAddFlags{}
	cmd := &cobra.Command{
		Use:   "add CONTEXT",
		Short: "Register the cluster of a kubeconfig context, creating the argocd-manager ServiceAccount there",
		Long: "Reads CONTEXT from the kubeconfig, creates ServiceAccount argocd-manager in kube-system with full\n" +
			"rights (ClusterRole argocd-manager-role and ClusterRoleBinding argocd-manager-role-binding, or a Role and\n" +
			"RoleBinding in each --namespace), a long-lived token Secret, and registers the cluster with that token.\n" +
			"With --service-account an existing ServiceAccount's token is used instead; with --exec-command the\n" +
			"command gives the credentials; with --in-cluster Capstan's own ServiceAccount reaches it.",
		Example: "  capstan cluster add prod-admin@prod\n  capstan cluster add staging --name staging --namespace web --namespace api --yes\n" +
			"  capstan cluster add prod --label env=prod --annotation team=ops --shard 1 --yes",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := o.spec(cmd, args[0])
			if err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.Do(cmd.Context(), "POST", apiclient.Path("/api/v1/clusters").With(url.Values{"upsert": {strconv.FormatBool(o.upsert)}}), spec, nil); err != nil {
				return fmt.Errorf("registering cluster %s: %w", spec.Server, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' added\n", spec.Server)
			return nil
		},
	}
	o.add(cmd)
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&o.upsert, "upsert", false, "replace an existing cluster with different settings")
	cmd.Flags().StringVar(&o.proxyURL, "proxy-url", "", "HTTP(S) or SOCKS5 proxy to reach the cluster through")
	cmd.Flags().StringVar(&o.serverProxyURL, "server-proxy-url", "", `proxy the server reaches the cluster through, instead of --proxy-url's ("" for none)`)
	return cmd
}

// add registers the flags cluster add shares with admin cluster
// generate-spec.
func (o *clusterAddFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&o.name, "name", "", "cluster name (default: the context's name)")
	fl.StringArrayVar(&o.namespaces, "namespace", nil, "manage only this namespace, with a Role instead of a ClusterRole (repeatable)")
	fl.BoolVar(&o.clusterResources, "cluster-resources", false, "with --namespace, still manage cluster-scoped resources")
	fl.StringVar(&o.project, "project", "", "limit the cluster to one project")
	fl.StringArrayVar(&o.labels, "label", nil, "label KEY=VALUE of the cluster (repeatable)")
	fl.StringArrayVar(&o.annotations, "annotation", nil, "annotation KEY=VALUE of the cluster (repeatable)")
	fl.Int64Var(&o.shard, "shard", -1, "the controller shard that manages the cluster (default: by hash)")
	fl.StringVar(&o.serviceAccount, "service-account", "", "use this existing ServiceAccount's token instead of creating argocd-manager")
	fl.StringVar(&o.systemNamespace, "system-namespace", cluster.ManagerNamespace, "namespace of the ServiceAccount")
	fl.BoolVar(&o.inCluster, "in-cluster", false, "Capstan runs in this cluster: reach it as https://kubernetes.default.svc with its own ServiceAccount")
	fl.BoolVar(&o.disableCompression, "disable-compression", false, "ask the cluster for uncompressed responses")
	fl.StringVar(&o.endpoint, "cluster-endpoint", "kubeconfig", "the server address to register: kubeconfig (the context's), kube-public (as kube-public's cluster-info publishes it) or internal (https://kubernetes.default.svc)")
	fl.StringVar(&o.execCommand, "exec-command", "", "command that prints the cluster's credentials (a kubeconfig exec plugin)")
	fl.StringArrayVar(&o.execArgs, "exec-command-args", nil, "arguments of --exec-command (repeatable)")
	fl.StringToStringVar(&o.execEnv, "exec-command-env", nil, "environment of --exec-command, NAME=VALUE")
	fl.StringVar(&o.execAPIVersion, "exec-command-api-version", "client.authentication.k8s.io/v1", "the exec plugin's API version")
	fl.StringVar(&o.execInstallHint, "exec-command-install-hint", "", "what to tell a user whose machine lacks --exec-command")
	fl.StringVar(&o.aws.ClusterName, "aws-cluster-name", "", "reach an EKS cluster of this name with the controller's AWS identity (no ServiceAccount is made)")
	fl.StringVar(&o.aws.RoleARN, "aws-role-arn", "", "with --aws-cluster-name, the IAM role to assume first")
	fl.StringVar(&o.aws.Profile, "aws-profile", "", "with --aws-cluster-name, the AWS configuration profile")
}

// spec makes the cluster to register from a context: its server and CA,
// and credentials as the flags ask (argocd-manager's token by default).
func (o *clusterAddFlags) spec(cmd *cobra.Command, context string) (*cluster.Spec, error) {
	if o.endpoint != "kubeconfig" && o.endpoint != "kube-public" && o.endpoint != "internal" {
		return nil, fmt.Errorf("--cluster-endpoint %q: use kubeconfig, kube-public or internal", o.endpoint)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %w", context, err)
	}
	labels, err := keyValues("label", o.labels)
	if err != nil {
		return nil, err
	}
	annotations, err := keyValues("annotation", o.annotations)
	if err != nil {
		return nil, err
	}
	spec := &cluster.Spec{Server: strings.TrimSuffix(cfg.Host, "/"), Name: cmp.Or(o.name, context), Namespaces: o.namespaces,
		ClusterResources: o.clusterResources, Project: o.project, Labels: labels, Annotations: annotations}
	if o.shard >= 0 {
		spec.Shard = &o.shard
	}
	switch {
	case o.inCluster:
		spec.Server = cluster.InClusterServer
		return spec, nil
	case o.aws.ClusterName != "":
		aws := o.aws
		spec.Config.AWSAuthConfig = &aws
	case o.execCommand != "":
		spec.Config.ExecProviderConfig = &cluster.ExecProviderConfig{Command: o.execCommand, Args: o.execArgs, Env: o.execEnv,
			APIVersion: o.execAPIVersion, InstallHint: o.execInstallHint}
	case o.bearerToken != "" || o.noToken:
		spec.Config.BearerToken = o.bearerToken
	default:
		token, err := o.token(cmd, cfg, context)
		if err != nil {
			return nil, err
		}
		spec.Config.BearerToken = token
	}
	caData, err := caOf(cfg)
	if err != nil {
		return nil, err
	}
	spec.Config.TLSClientConfig = cluster.TLSClientConfig{Insecure: cfg.Insecure, ServerName: cfg.ServerName, CAData: caData}
	spec.Config.ProxyURL, spec.Config.DisableCompression = o.proxyURL, o.disableCompression
	if cmd.Flags().Changed("server-proxy-url") {
		if err := checkProxyURL(o.serverProxyURL); err != nil {
			return nil, fmt.Errorf("--server-proxy-url: %w", err)
		}
		spec.Config.ProxyURL = o.serverProxyURL
	}
	switch o.endpoint {
	case "internal":
		spec.Server = cluster.InClusterServer
	case "kube-public":
		server, ca, err := kubePublicEndpoint(cmd.Context(), cfg)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "WARN the cluster's endpoint from kube-public: %v; using the kubeconfig context's, %s\n", err, spec.Server)
			break
		}
		spec.Server, spec.Config.TLSClientConfig.CAData = server, ca
	}
	return spec, nil
}

// kubePublicEndpoint reads the API server's address and CA certificates
// as the cluster publishes them, in kube-public's cluster-info ConfigMap
// (which kubeadm writes).
func kubePublicEndpoint(ctx context.Context, cfg *rest.Config) (string, []byte, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", nil, err
	}
	info, err := cs.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
	if err != nil {
		return "", nil, err
	}
	published, err := clientcmd.Load([]byte(info.Data["kubeconfig"]))
	if err != nil {
		return "", nil, fmt.Errorf("ConfigMap/kube-public/cluster-info: its kubeconfig: %w", err)
	}
	names := slices.Sorted(maps.Keys(published.Clusters))
	if len(names) == 0 || published.Clusters[names[0]].Server == "" {
		return "", nil, errors.New("ConfigMap/kube-public/cluster-info: its kubeconfig names no cluster")
	}
	c := published.Clusters[names[0]]
	return strings.TrimSuffix(c.Server, "/"), c.CertificateAuthorityData, nil
}

// token is the bearer token Capstan will use: argocd-manager's, made on
// the cluster after asking, or an existing ServiceAccount's.
func (o *clusterAddFlags) token(cmd *cobra.Command, cfg *rest.Config, context string) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	if o.serviceAccount != "" {
		return cluster.ServiceAccountToken(cmd.Context(), cs, cluster.ServiceAccount{Namespace: o.systemNamespace, Name: o.serviceAccount})
	}
	if !o.yes {
		fmt.Fprintf(cmd.OutOrStdout(), "WARNING: This will create a service account `%s` on the cluster referenced by context `%s` with full %s level admin privileges. Do you want to continue [y/N]? ",
			cluster.ManagerServiceAccount, context, map[bool]string{true: "cluster", false: "namespace"}[len(o.namespaces) == 0])
		answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return "", fmt.Errorf("cluster add of %s cancelled", context)
		}
	}
	account := cluster.ServiceAccount{Namespace: o.systemNamespace, Name: cluster.ManagerServiceAccount}
	token, err := cluster.InstallManager(cmd.Context(), cs, account, o.namespaces, func(msg string) { fmt.Fprintln(cmd.ErrOrStderr(), "INFO", msg) })
	if err != nil {
		return "", fmt.Errorf("preparing cluster %s: %w", cfg.Host, err)
	}
	return token, nil
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
			var resp apiwire.ClusterList
			if err := c.Do(cmd.Context(), "GET", "/api/v1/clusters", nil, &resp); err != nil {
				return fmt.Errorf("listing clusters: %w", err)
			}
			switch output {
			case "server":
				for _, s := range resp.Items {
					fmt.Fprintln(cmd.OutOrStdout(), s.Server)
				}
				return nil
			case "wide":
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "SERVER\tNAME\tVERSION\tSTATUS\tMESSAGE\tPROJECT")
				for _, s := range resp.Items {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Server, s.Name, s.Info.ServerVersion, s.Info.ConnectionState.Status,
						s.Info.ConnectionState.Message, s.Project)
				}
				return tw.Flush()
			}
			return cmdutil.PrintObject(cmd.OutOrStdout(), resp.Items, output)
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, server, json or yaml")
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
			var spec apiwire.Cluster
			if err := c.Do(cmd.Context(), "GET", clusterRef(args[0], ""), nil, &spec); err != nil {
				return fmt.Errorf("getting cluster %s: %w", args[0], err)
			}
			return cmdutil.PrintObject(cmd.OutOrStdout(), spec, output)
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: json or yaml")
	return cmd
}

func newClusterRmCommand(f *clientFlags) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "rm SERVER|NAME...",
		Short:   "Remove clusters (their argocd-manager ServiceAccount stays)",
		Example: "  capstan cluster rm https://prod.example.com:6443\n  capstan cluster rm staging -y",
		Args:    cobra.MinimumNArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			for _, arg := range args {
				if !f.confirm(cmd, yes, fmt.Sprintf("Are you sure you want to remove '%s'? Any Apps deploying to this cluster will go to health status Unknown. [y/n] ", arg)) {
					fmt.Fprintf(cmd.OutOrStdout(), "The command to remove '%s' was cancelled.\n", arg)
					continue
				}
				if err := c.Do(cmd.Context(), "DELETE", clusterRef(arg, ""), nil, nil); err != nil {
					return fmt.Errorf("removing cluster %s: %w", arg, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' removed\n", arg)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// clusterRef is the API path of a cluster named by its server URL, or by
// its name (anything that is not a URL), as Argo CD's CLI takes either.
func clusterRef(serverOrName, sub string) apiclient.Path {
	if strings.Contains(serverOrName, "://") {
		return clusterPath(serverOrName, sub)
	}
	return clusterPath(serverOrName, sub).With(url.Values{"id.type": {"name"}})
}

func newClusterSetCommand(f *clientFlags) *cobra.Command {
	var name string
	var namespaces, labels, annotations []string
	cmd := &cobra.Command{
		Use:     "set NAME",
		Short:   "Change a cluster's name, namespaces, labels or annotations",
		Example: "  capstan cluster set prod --name production\n  capstan cluster set prod --namespace web --namespace api --label env=prod",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			spec := cluster.Spec{Name: name, Namespaces: namespaces}
			var err error
			if spec.Labels, err = keyValues("label", labels); err != nil {
				return err
			}
			if spec.Annotations, err = keyValues("annotation", annotations); err != nil {
				return err
			}
			q := url.Values{}
			for flag, field := range map[string]string{"name": "name", "namespace": "namespaces", "label": "labels", "annotation": "annotations"} {
				if cmd.Flags().Changed(flag) {
					q.Add("updatedFields", field)
				}
			}
			if len(q) == 0 {
				return fmt.Errorf("nothing to change: pass --name, --namespace, --label or --annotation")
			}
			if err := c.Do(cmd.Context(), "PUT", clusterRef(args[0], "").With(q), spec, nil); err != nil {
				return fmt.Errorf("updating cluster %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' updated.\n", args[0])
			return nil
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "new name of the cluster")
	cmd.Flags().StringArrayVar(&namespaces, "namespace", nil, "manage only these namespaces (repeatable; '*' for all)")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "labels KEY=VALUE, replacing the cluster's (repeatable)")
	cmd.Flags().StringArrayVar(&annotations, "annotation", nil, "annotations KEY=VALUE, replacing the cluster's (repeatable)")
	return cmd
}

func newClusterRotateAuthCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "rotate-auth SERVER",
		Short:   "Issue a new argocd-manager token for a cluster and revoke the old one",
		Example: "  capstan cluster rotate-auth https://prod.example.com:6443",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if err := c.Do(cmd.Context(), "POST", clusterRef(args[0], "/rotate-auth"), nil, nil); err != nil {
				return fmt.Errorf("rotating the credentials of cluster %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' rotated auth\n", args[0])
			return nil
		}),
	}
}

// checkProxyURL accepts "" (no proxy) or an http, https or socks5 URL
// with a host.
func checkProxyURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5") || u.Host == "" {
		return fmt.Errorf("%q is not an http, https or socks5 URL with a host", raw)
	}
	return nil
}
