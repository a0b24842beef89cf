package manifests_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestHAComponents runs every replica of ha/install.yaml as its pod would
// (see kubelet), on a cluster of its own: two API servers, two repo
// servers and two controller shards, each shard taking its number from
// its StatefulSet pod's name. The demo apps sync and turn Healthy, each
// shard holds its own Lease, and every API server and repo server answers
// over TLS.
func TestHAComponents(t *testing.T) {
	localcluster.Need(t)
	if !inPodNamespaces() {
		t.Skip("controller shards read their ordinal from the host name, which takes pods in namespaces of their own")
	}
	ctx := context.Background()
	cl, err := localcluster.Start(ctx, localcluster.Options{Workloads: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop() })
	const ns = "argocd"
	createNamespace(t, cl, ns)
	objs := readObjects(t, "ha/install.yaml")
	apply(t, cl, objs, ns)
	in := runInstall(t, cl, objs, ns)
	for _, name := range []string{"argocd-server", "argocd-repo-server", "argocd-application-controller"} {
		if n := len(in.ips[name]); n != 2 {
			t.Fatalf("%s runs %d replicas, want 2", name, n)
		}
	}
	in.syncDemo(t, cl, ns)
	for shard := range 2 {
		lease, err := in.cs.CoordinationV1().Leases(ns).Get(ctx, fmt.Sprintf("capstan-application-controller-shard-%d", shard), metav1.GetOptions{})
		if err != nil {
			t.Errorf("shard %d: %v", shard, err)
			continue
		}
		if want := fmt.Sprintf("argocd-application-controller-%d_", shard); lease.Spec.HolderIdentity == nil || !strings.HasPrefix(*lease.Spec.HolderIdentity, want) {
			t.Errorf("shard %d's Lease is held by %v, want pod argocd-application-controller-%d", shard, lease.Spec.HolderIdentity, shard)
		}
	}
	password := in.adminPassword(t, ns)
	for _, ip := range in.ips["argocd-server"] {
		checkAPI(t, ip, password, len(demoApps))
	}
	for _, ip := range in.ips["argocd-repo-server"] {
		conn, err := tls.Dial("tcp", ip+":8081", &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
		if err != nil {
			t.Errorf("repo server %s: %v", ip, err)
			continue
		}
		_ = conn.Close()
	}
	if t.Failed() {
		in.dumpLogs(t)
	}
}
