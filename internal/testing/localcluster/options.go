package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// KubeVersion is the Kubernetes release `make kube` builds; it must match
// KUBE_VERSION in the Makefile and the pin in tools/kube/go.mod.
const KubeVersion = "v1.36.3"

// BinDirEnv names the environment variable that points at the binaries. The
// Makefile sets it; tests run with plain `go test` find bin/kube/<version>
// by walking up to the module root.
const BinDirEnv = "CAPSTAN_KUBE_BIN"

// Options configure a local cluster.
type Options struct {
	// Workloads also starts kube-controller-manager, kube-scheduler and kwok
	// with one fake Ready node, so Pods are scheduled and run. Default false:
	// only etcd and kube-apiserver, which start several times faster.
	Workloads bool

	// BinDir holds the binaries. Default: $CAPSTAN_KUBE_BIN, else
	// bin/kube/<KubeVersion> under the module root.
	BinDir string

	// Dir holds the cluster's data, certificates, kubeconfigs and logs.
	// Default: a new temporary directory, removed by Stop. A given Dir is
	// kept by Stop, so `make cluster` can leave its kubeconfig in place.
	Dir string

	// StartTimeout bounds the wait for the API server (and the node, with
	// Workloads). Default 2 minutes: a first start on a loaded two-core
	// machine can take tens of seconds.
	StartTimeout time.Duration

	// NodeName is the fake node's name. Default "kwok-node-0".
	NodeName string

	// Profiling serves the API server's /debug/pprof to its admins.
	// Default false, as it costs the API server time on every request.
	Profiling bool

	// TokenWebhookConfig, when set, is the kubeconfig of a TokenReview
	// webhook that authenticates the bearer tokens no other authenticator
	// knows, as a managed cluster's API server asks its cloud (EKS's
	// aws-iam-authenticator). Default: none.
	TokenWebhookConfig string
}

func (o Options) withDefaults() (Options, error) {
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.NodeName == "" {
		o.NodeName = "kwok-node-0"
	}
	if o.BinDir == "" {
		o.BinDir = os.Getenv(BinDirEnv)
	}
	if o.BinDir == "" {
		root, err := moduleRoot()
		if err != nil {
			return o, err
		}
		o.BinDir = filepath.Join(root, "bin", "kube", KubeVersion)
	}
	return o, nil
}

// binaries returns the paths of the programs the options need, or an error
// naming the make target that builds them.
func (o Options) binaries() (map[string]string, error) {
	names := []string{"etcd", "kube-apiserver"}
	if o.Workloads {
		names = append(names, "kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml", "kwok-crds.yaml")
	}
	paths := make(map[string]string, len(names))
	var missing []string
	for _, n := range names {
		p := filepath.Join(o.BinDir, n)
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, n)
			continue
		}
		paths[n] = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("local Kubernetes %s binaries %v not found in %s: run `make kube` to build them", KubeVersion, missing, o.BinDir)
	}
	return paths, nil
}

// moduleRoot finds the directory of the main module's go.mod from the
// working directory upwards.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "tools", "kube")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the Capstan module root (a go.mod beside tools/kube): set " + BinDirEnv)
		}
		dir = parent
	}
}
