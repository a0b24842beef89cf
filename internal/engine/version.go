package engine

import (
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/internal/cluster"
)

// ClusterVersion is what a destination last answered about its version.
type ClusterVersion = cluster.Version

// Version returns what the destination last answered about its version,
// and asks again in the background, on the destination's own client,
// when that is older than cluster.VersionTTL.
func (d *Destination) Version() ClusterVersion {
	return d.version.Get(func() (rest.Interface, error) {
		cs, err := d.Kube()
		if err != nil {
			return nil, err
		}
		return cs.Discovery().RESTClient(), nil
	})
}
