package cmdutil

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/kube"
)

// KubeFlags are kubectl's connection flags (--kubeconfig, --context,
// --namespace, …), with which the admin commands reach Argo CD's install
// directly rather than through an API server.
type KubeFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides clientcmd.ConfigOverrides
}

// AddKubeFlags puts kubectl's flags on fs (those fs has already are left
// alone) and returns what they read.
func AddKubeFlags(fs *pflag.FlagSet) *KubeFlags {
	k := &KubeFlags{rules: clientcmd.NewDefaultClientConfigLoadingRules()}
	flags := pflag.NewFlagSet("kube", pflag.ContinueOnError)
	flags.StringVar(&k.rules.ExplicitPath, "kubeconfig", "", "path to a kubeconfig")
	clientcmd.BindOverrideFlags(&k.overrides, flags, clientcmd.RecommendedConfigOverrideFlags(""))
	flags.VisitAll(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) == nil {
			fs.AddFlag(f)
		}
	})
	return k
}

func (k *KubeFlags) clientConfig() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, &k.overrides)
}

// RestConfig is the connection the flags describe.
func (k *KubeFlags) RestConfig() (*rest.Config, error) {
	cfg, err := k.clientConfig().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// Namespace is --namespace, else the kubeconfig context's, else argocd:
// where Argo CD's install is.
func (k *KubeFlags) Namespace() string {
	ns, explicit, err := k.clientConfig().Namespace()
	if err != nil || (!explicit && (ns == "" || ns == "default")) {
		return "argocd"
	}
	return ns
}

// Client reaches the cluster with Capstan's scheme.
func (k *KubeFlags) Client() (client.Client, error) {
	cfg, err := k.RestConfig()
	if err != nil {
		return nil, err
	}
	return kube.NewClient(cfg)
}

// WithKubeFlags gives a command group the kubeconfig flags Argo CD's CLI
// puts on its groups (kubectl's, without --server), which only --core mode
// reads.
func WithKubeFlags(group *cobra.Command) *cobra.Command {
	fs := pflag.NewFlagSet("group", pflag.ContinueOnError)
	AddKubeFlags(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "server" && group.Flags().Lookup(f.Name) == nil {
			group.Flags().AddFlag(f)
		}
	})
	return group
}
