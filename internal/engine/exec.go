package engine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// Exec runs command in a container of a pod of the cluster with a
// terminal, its streams those of opts, until it ends or ctx does: what a
// web terminal is made of. It acts as user (Kubernetes impersonation), or
// with the destination's own rights when user is "".
func (d *Destination) Exec(ctx context.Context, user, namespace, pod, container string, command []string, opts remotecommand.StreamOptions) error {
	cfg := d.config
	if user != "" {
		cfg = rest.CopyConfig(d.config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Name(pod).Namespace(namespace).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command,
			Stdin: opts.Stdin != nil, Stdout: opts.Stdout != nil, Stderr: opts.Stderr != nil, TTY: opts.Tty}, scheme.ParameterCodec)
	exec, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return fmt.Errorf("exec in Pod/%s/%s: %w", namespace, pod, err)
	}
	return exec.StreamWithContext(ctx, opts)
}
