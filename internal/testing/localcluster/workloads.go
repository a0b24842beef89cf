package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kwokNodeAnnotation marks the nodes kwok manages.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// startWorkloadComponents starts the controllers, the scheduler and kwok,
// registers the fake node and waits until it is Ready and untainted.
func (c *Cluster) startWorkloadComponents(ctx context.Context, server string, bins map[string]string) error {
	kubeconfigs := map[string]string{}
	for _, who := range []string{"kube-controller-manager", "kube-scheduler", "kwok"} {
		path, err := c.writeKubeconfig(server, who)
		if err != nil {
			return err
		}
		kubeconfigs[who] = path
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	logsConfig, err := c.writePodLogs()
	if err != nil {
		return err
	}
	if err := c.installKwokCRDs(ctx, bins["kwok-crds.yaml"]); err != nil {
		return err
	}

	starts := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{
			"--kubeconfig=" + kubeconfigs["kube-controller-manager"],
			"--leader-elect=false",
			"--secure-port=0",
			// nodelifecycle must stay: it lifts the not-ready taint from the
			// kwok node. nodeipam needs a pod CIDR and does nothing useful here.
			"--controllers=*,-nodeipam",
			// kwok readies a pod only while it is Pending: a node marked
			// NotReady after an API-server outage longer than the default
			// grace would leave its Running pods unready for good.
			"--node-monitor-grace-period=1h",
			"--service-account-private-key-file=" + c.pki.saKeyFile,
			"--root-ca-file=" + c.pki.caFile,
			"--service-cluster-ip-range=" + serviceCIDR,
			"--v=1",
		}},
		{"kube-scheduler", []string{
			"--kubeconfig=" + kubeconfigs["kube-scheduler"],
			"--leader-elect=false",
			"--secure-port=0",
			"--v=1",
		}},
		{"kwok", []string{
			"--kubeconfig=" + kubeconfigs["kwok"],
			"--config=" + bins["kwok-stages.yaml"],
			"--config=" + logsConfig,
			// Port forwards come from PortForward objects (ForwardPort).
			// and commands run in them from Exec objects (AllowExec).
			"--enable-crds=PortForward,Exec",
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			// kwok serves the kubelet's API (pod logs) there, over TLS, and
			// the node's address sends the API server to it.
			"--server-address=127.0.0.1:" + strconv.Itoa(ports[0]),
			"--tls-cert-file=" + c.pki.certFile,
			"--tls-private-key-file=" + c.pki.keyFile,
			"--node-ip=127.0.0.1",
			"--node-port=" + strconv.Itoa(ports[0]),
			"--cidr=10.244.0.0/16",
		}},
	}
	for _, s := range starts {
		if err := c.start(s.name, bins[s.name], s.args); err != nil {
			return err
		}
	}

	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, fakeNode(c.opts.NodeName), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating node %s: %w", c.opts.NodeName, err)
	}
	return c.waitNodeSchedulable(ctx, cs)
}

// PodLogLines are what every container of the fake node logs.
var PodLogLines = []string{"capstan test log line 1", "capstan test log line 2"}

// writePodLogs writes the log every fake container shows, in the CRI
// format kwok reads, and the kwok configuration that serves it.
func (c *Cluster) writePodLogs() (string, error) {
	logs := filepath.Join(c.Dir, "pod.log")
	var lines strings.Builder
	for i, l := range PodLogLines {
		fmt.Fprintf(&lines, "2026-01-01T00:00:0%dZ stdout F %s\n", i, l)
	}
	if err := os.WriteFile(logs, []byte(lines.String()), 0o644); err != nil {
		return "", err
	}
	config := filepath.Join(c.Dir, "kwok-logs.yaml")
	doc := "apiVersion: kwok.x-k8s.io/v1alpha1\nkind: ClusterLogs\nmetadata: {name: all-pods}\nspec:\n  selector: {}\n  logs:\n  - containers: []\n    logsFile: " + logs + "\n"
	return config, os.WriteFile(config, []byte(doc), 0o644)
}

// fakeNode is a node kwok plays the kubelet for: it accepts any pod and has
// room for many.
func fakeNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// waitNodeSchedulable waits until the node is Ready and carries no
// NoSchedule taint, so the scheduler will place pods on it.
func (c *Cluster) waitNodeSchedulable(ctx context.Context, cs kubernetes.Interface) error {
	for {
		if err := c.anyExited(); err != nil {
			return err
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, c.opts.NodeName, metav1.GetOptions{})
		if err == nil && nodeSchedulable(node) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready and schedulable: %w (logs in %s)", c.opts.NodeName, ctx.Err(), c.LogDir())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func nodeSchedulable(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
