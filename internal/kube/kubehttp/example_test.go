package kubehttp_test

import (
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
)

// A component reads Argo CD's ARGOCD_K8S_* settings and tunes its client
// configuration with them; clients built from it retry, and time out, as
// set.
func ExampleOptions_Apply() {
	env := map[string]string{kubehttp.EnvRetryMax: "3", kubehttp.EnvTLSHandshakeTimeout: "5s"}
	tuning, err := kubehttp.FromEnv(func(name string) string { return env[name] })
	if err != nil {
		panic(err)
	}
	cfg := &rest.Config{Host: "https://kubernetes.default.svc"}
	tuning.Apply(cfg)
	fmt.Println(tuning.RetryMax, tuning.TLSHandshakeTimeout == 5*time.Second, cfg.WrapTransport != nil)
	// Output: 3 true true
}
