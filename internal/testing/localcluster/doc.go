// Package localcluster starts a real Kubernetes control plane on loopback
// ports, from binaries built out of Go modules by `make kube`.
//
// By default a cluster is etcd plus kube-apiserver: enough for tests of
// anything that talks to the API (CRDs, Secrets, server-side apply), and ready
// in about two seconds. With Options.Workloads it also runs
// kube-controller-manager, kube-scheduler and kwok with one fake Ready node,
// so Deployments get Pods that run and become Available.
//
// A test package starts one cluster for all its tests in TestMain:
//
//	var cluster *localcluster.Cluster
//
//	func TestMain(m *testing.M) {
//		os.Exit(localcluster.RunTests(m, localcluster.Options{}, &cluster))
//	}
//
// and each test works in its own namespace. RunTests prints the tail of every
// component's log when a test fails, and keeps the logs on disk.
package localcluster
