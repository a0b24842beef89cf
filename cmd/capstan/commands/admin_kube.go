package commands

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/kube"
)

// kubeFlags are kubectl's connection flags (--kubeconfig, --context,
// --namespace, …), with which the admin commands reach Argo CD's install
// directly rather than through an API server.
type kubeFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides clientcmd.ConfigOverrides
}

// addKubeFlags puts kubectl's flags on fs (those fs has already are left
// alone) and returns what they read.
func addKubeFlags(fs *pflag.FlagSet) *kubeFlags {
	k := &kubeFlags{rules: clientcmd.NewDefaultClientConfigLoadingRules()}
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

func (k *kubeFlags) clientConfig() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, &k.overrides)
}

// restConfig is the connection the flags describe.
func (k *kubeFlags) restConfig() (*rest.Config, error) {
	cfg, err := k.clientConfig().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// namespace is --namespace, else the kubeconfig context's, else argocd:
// where Argo CD's install is.
func (k *kubeFlags) namespace() string {
	ns, explicit, err := k.clientConfig().Namespace()
	if err != nil || (!explicit && (ns == "" || ns == "default")) {
		return "argocd"
	}
	return ns
}

// client reaches the cluster with Capstan's scheme.
func (k *kubeFlags) client() (client.Client, error) {
	cfg, err := k.restConfig()
	if err != nil {
		return nil, err
	}
	return kube.NewClient(cfg)
}

// withKubeFlags gives a command group the kubeconfig flags Argo CD's CLI
// puts on its groups (kubectl's, without --server), which only --core mode
// reads.
func withKubeFlags(group *cobra.Command) *cobra.Command {
	fs := pflag.NewFlagSet("group", pflag.ContinueOnError)
	addKubeFlags(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "server" && group.Flags().Lookup(f.Name) == nil {
			group.Flags().AddFlag(f)
		}
	})
	return group
}
