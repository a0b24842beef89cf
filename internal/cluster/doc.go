// Package cluster knows the destination clusters Applications deploy to:
// the cluster Capstan runs in ("in-cluster") and every cluster Secret
// (label argocd.argoproj.io/secret-type: cluster) in Argo CD's format.
//
//	reg := &cluster.Registry{Reader: c, Namespace: "argocd", InCluster: cfg}
//	dst, err := reg.Get(ctx, app.Spec.Destination)
//	// dst.Config reaches the destination's API server
package cluster
