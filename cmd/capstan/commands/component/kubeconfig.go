package component

import (
	"os"

	"k8s.io/client-go/rest"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
)

// kubeConfig is the control cluster's client configuration at qps and
// burst, tuned by Argo CD's ARGOCD_K8S_* variables; the tuning is returned
// too, for the destination clusters' clients.
func kubeConfig(qps float32, burst int) (*rest.Config, kubehttp.Options, error) {
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, kubehttp.Options{}, err
	}
	cfg.QPS, cfg.Burst = qps, burst
	tuning, err := kubehttp.FromEnv(os.Getenv)
	if err != nil {
		return nil, kubehttp.Options{}, err
	}
	tuning.Apply(cfg)
	return cfg, tuning, nil
}
