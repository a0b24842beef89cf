package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cli"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/project"
)

func newAdminClusterCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Cluster tools that read Argo CD's install through the kubeconfig"}
	namespaces := newAdminClusterNamespacesCommand()
	namespaces.AddCommand(newAdminNamespacedModeCommand(true), newAdminNamespacedModeCommand(false))
	cmd.AddCommand(cli.NewClusterGenerateSpecCommand(), newAdminClusterKubeconfigCommand(), namespaces,
		newAdminClusterShardsCommand(false), newAdminClusterShardsCommand(true))
	return cmd
}

// installed is what the admin cluster commands read of an install: its
// clusters and Applications.
type installed struct {
	c        client.Client
	ns       string
	clusters []*cluster.Cluster
	apps     []v1alpha1.Application
}

func readInstall(ctx context.Context, k *cmdutil.KubeFlags) (*installed, error) {
	c, err := k.Client()
	if err != nil {
		return nil, err
	}
	cfg, err := k.RestConfig()
	if err != nil {
		return nil, err
	}
	in := &installed{c: c, ns: k.Namespace()}
	if in.clusters, err = (&cluster.Registry{Reader: c, Namespace: in.ns, InCluster: cfg}).List(ctx); err != nil {
		return nil, err
	}
	var apps v1alpha1.ApplicationList
	if err := c.List(ctx, &apps); err != nil {
		return nil, fmt.Errorf("listing Applications: %w", err)
	}
	in.apps = apps.Items
	return in, nil
}

// appsOf are the Applications deploying to a cluster (by server or name).
func (in *installed) appsOf(cl *cluster.Cluster) []v1alpha1.Application {
	var out []v1alpha1.Application
	for _, a := range in.apps {
		if d := a.Spec.Destination; strings.TrimSuffix(d.Server, "/") == cl.Server || (d.Server == "" && d.Name == cl.Name) {
			out = append(out, a)
		}
	}
	return out
}

// usedNamespaces are the namespaces a cluster's Applications deploy to.
func (in *installed) usedNamespaces(cl *cluster.Cluster) []string {
	var out []string
	for _, a := range in.appsOf(cl) {
		for _, r := range a.Status.Resources {
			if r.Namespace != "" && !slices.Contains(out, r.Namespace) {
				out = append(out, r.Namespace)
			}
		}
		if ns := a.Spec.Destination.Namespace; ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

func newAdminClusterShardsCommand(stats bool) *cobra.Command {
	var replicas, shard int
	var method string
	var k *cmdutil.KubeFlags
	use, short := "shards", "Print which controller shard manages each cluster, and its Applications and resources"
	if stats {
		use, short = "stats", "Print each cluster's shard, connection, namespaces, Applications and resources"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  capstan admin cluster " + use + " --replicas 3",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sharding, err := cluster.ParseSharding(method)
			if err != nil {
				return err
			}
			in, err := readInstall(cmd.Context(), k)
			if err != nil {
				return err
			}
			appsByServer := map[string]int64{}
			for _, a := range in.apps {
				appsByServer[a.Spec.Destination.Server]++
			}
			shards := sharding.Assign(in.clusters, replicas, appsByServer)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			if stats {
				fmt.Fprintln(tw, "SERVER\tSHARD\tCONNECTION\tNAMESPACES COUNT\tAPPS COUNT\tRESOURCES COUNT")
			} else {
				fmt.Fprintln(tw, "SHARD\tSERVER\tAPPS COUNT\tRESOURCES COUNT")
			}
			for _, cl := range in.clusters {
				s := shards[cl.Server]
				if shard >= 0 && s != shard {
					continue
				}
				apps := in.appsOf(cl)
				resources := 0
				for _, a := range apps {
					resources += len(a.Status.Resources)
				}
				if stats {
					fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\n", cl.Server, s, connection(apps), len(in.usedNamespaces(cl)), len(apps), resources)
				} else {
					fmt.Fprintf(tw, "%d\t%s\t%d\t%d\n", s, cl.Server, len(apps), resources)
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&replicas, "replicas", 1, "how many controller replicas share the clusters")
	cmd.Flags().IntVar(&shard, "shard", -1, "only this shard's clusters")
	cmd.Flags().StringVar(&method, "sharding-method", "legacy", "how clusters are assigned to shards: legacy (a hash of the cluster Secret), round-robin or consistent-hashing")
	cmdutil.NoEffect(cmd, map[string]string{"redis": "string", "redisdb": "int", "sentinel": "stringArray", "sentinelmaster": "string",
		"redis-use-tls": "bool", "redis-ca-certificate": "string", "redis-client-certificate": "string", "redis-client-key": "string",
		"redis-insecure-skip-tls-verify": "bool", "port-forward-redis": "bool", "app-state-cache-expiration": "duration", "default-cache-expiration": "duration"},
		"the figures come from the Applications' status in the cluster, not from a Redis cache of the controller's")
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

// connection words what the controller last saw of a cluster, from its
// Applications: Unknown without any, Failed when one cannot be compared.
func connection(apps []v1alpha1.Application) string {
	if len(apps) == 0 {
		return "Unknown"
	}
	for _, a := range apps {
		for _, c := range a.Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionComparisonError || c.Type == v1alpha1.ApplicationConditionUnknownError {
				return "Failed"
			}
		}
	}
	return "Successful"
}

func newAdminClusterKubeconfigCommand() *cobra.Command {
	var k *cmdutil.KubeFlags
	cmd := &cobra.Command{
		Use:     "kubeconfig CLUSTER_URL OUTPUT_PATH",
		Short:   "Write a kubeconfig that reaches a cluster with the credentials Capstan holds for it",
		Example: "  capstan admin cluster kubeconfig https://prod.example.com:6443 prod.kubeconfig",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := readInstall(cmd.Context(), k)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(in.clusters, func(c *cluster.Cluster) bool { return c.Server == strings.TrimSuffix(args[0], "/") })
			if i < 0 {
				return fmt.Errorf("no cluster with server %s in %s", args[0], in.ns)
			}
			rc := in.clusters[i].Config
			cfg := clientcmdapi.NewConfig()
			name := cmp.Or(in.clusters[i].Name, "cluster")
			cfg.Clusters[name] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData, InsecureSkipTLSVerify: rc.Insecure, TLSServerName: rc.ServerName}
			cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: rc.BearerToken, Username: rc.Username, Password: rc.Password,
				ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData, Exec: rc.ExecProvider}
			cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
			cfg.CurrentContext = name
			return clientcmd.WriteToFile(*cfg, args[1])
		},
	}
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

func newAdminClusterNamespacesCommand() *cobra.Command {
	var k *cmdutil.KubeFlags
	cmd := &cobra.Command{
		Use:     "namespaces",
		Short:   "Print the namespaces each cluster's Applications deploy to",
		Example: "  capstan admin cluster namespaces",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := readInstall(cmd.Context(), k)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CLUSTER\tNAMESPACES")
			for _, cl := range in.clusters {
				fmt.Fprintf(tw, "%s\t%s\n", cl.Server, cmp.Or(strings.Join(in.usedNamespaces(cl), ", "), "<none>"))
			}
			return tw.Flush()
		},
	}
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

// newAdminNamespacedModeCommand limits each cluster (enable) to the
// namespaces its Applications use, or lifts the limit (disable).
func newAdminNamespacedModeCommand(enable bool) *cobra.Command {
	var dryRun, clusterResources bool
	var maxNamespaces int
	var k *cmdutil.KubeFlags
	use, short := "disable-namespaced-mode PATTERN", "Let Capstan manage every namespace of the matching clusters"
	if enable {
		use, short = "enable-namespaced-mode PATTERN", "Limit the matching clusters to the namespaces their Applications use"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  capstan admin cluster namespaces " + strings.Fields(use)[0] + " '*' --dry-run=false",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := readInstall(cmd.Context(), k)
			if err != nil {
				return err
			}
			for _, cl := range in.clusters {
				if cl.SecretName == "" || !project.GlobMatchAll(args[0], cl.Server) {
					continue
				}
				namespaces := in.usedNamespaces(cl)
				if enable && maxNamespaces > 0 && len(namespaces) > maxNamespaces {
					fmt.Fprintf(cmd.OutOrStdout(), "Skipping %s: %d namespaces, over --max-namespace-count\n", cl.Server, len(namespaces))
					continue
				}
				if !enable {
					namespaces = nil
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Updating %s: namespaces [%s]\n", cl.Server, strings.Join(namespaces, ", "))
				if dryRun {
					continue
				}
				if err := setClusterNamespaces(cmd.Context(), in, cl, namespaces, enable && clusterResources); err != nil {
					return err
				}
			}
			if dryRun {
				fmt.Fprintln(cmd.OutOrStdout(), "(dry run: nothing was changed; pass --dry-run=false)")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", true, "only show what would change")
	if enable {
		cmd.Flags().BoolVar(&clusterResources, "cluster-resources", false, "still manage cluster-scoped resources")
		cmd.Flags().IntVar(&maxNamespaces, "max-namespace-count", 0, "leave a cluster whose Applications use more namespaces than this (0: no limit)")
	}
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

// setClusterNamespaces writes a cluster Secret's namespaces.
func setClusterNamespaces(ctx context.Context, in *installed, cl *cluster.Cluster, namespaces []string, clusterResources bool) error {
	sec := &corev1.Secret{}
	if err := in.c.Get(ctx, client.ObjectKey{Namespace: in.ns, Name: cl.SecretName}, sec); err != nil {
		return err
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	delete(sec.Data, "namespaces")
	delete(sec.Data, "clusterResources")
	if len(namespaces) > 0 {
		sec.Data["namespaces"] = []byte(strings.Join(namespaces, ","))
	}
	if clusterResources {
		sec.Data["clusterResources"] = []byte("true")
	}
	if err := in.c.Update(ctx, sec); err != nil {
		return fmt.Errorf("updating Secret/%s/%s: %w", sec.Namespace, sec.Name, err)
	}
	return nil
}
