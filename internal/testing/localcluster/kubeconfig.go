package localcluster

import (
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName is the kubeconfig context of every local cluster.
const contextName = "capstan-local"

// restConfig returns a client config for one of the cluster's identities.
func (c *Cluster) restConfig(server, who string) *rest.Config {
	return &rest.Config{
		Host:            server,
		BearerToken:     c.pki.identities[who].token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.pki.caPEM},
		QPS:             100,
		Burst:           200,
	}
}

// writeKubeconfig writes kubeconfig/<who>.kubeconfig and returns its path.
func (c *Cluster) writeKubeconfig(server, who string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.pki.caPEM}
	cfg.AuthInfos[who] = &clientcmdapi.AuthInfo{Token: c.pki.identities[who].token}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: who, Namespace: "default"}
	cfg.CurrentContext = contextName
	path := filepath.Join(c.Dir, "kubeconfig", who+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
