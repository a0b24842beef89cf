package engine_test

import (
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestDestinationVersion: a destination's version is asked in the
// background: unknown at first, then the API server's major.minor and
// connected; a cluster that does not answer is reported not connected.
func TestDestinationVersion(t *testing.T) {
	localcluster.Need(t)
	dests := engine.NewDestinations(engine.DestinationOptions{})
	defer dests.Stop()
	dst, err := dests.Get(inCluster())
	if err != nil {
		t.Fatal(err)
	}
	if v := dst.Version(); !v.At.IsZero() {
		t.Errorf("before any answer: %+v", v)
	}
	info, err := kubernetes.NewForConfigOrDie(kubeCluster.Config).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	eventually.String(t, "the local cluster's version", func() string {
		if v := dst.Version(); v.At.IsZero() || !v.Connected || v.Version != info.Major+"."+info.Minor {
			return "not yet"
		}
		return ""
	})

	gone, err := dests.Get(&cluster.Cluster{Name: "gone", Server: "https://127.0.0.1:1", Config: &rest.Config{Host: "https://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	gone.Version()
	eventually.String(t, "an unreachable cluster's answer", func() string {
		if v := gone.Version(); v.At.IsZero() || v.Connected {
			return "not yet"
		}
		return ""
	})
}
