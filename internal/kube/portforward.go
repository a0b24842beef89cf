package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"
)

// ErrNoPod is returned by PortForward when no running pod matches.
var ErrNoPod = errors.New("no running pod matches")

// PortForward forwards a free port of 127.0.0.1 to port of a running pod
// that selector (a label selector) picks in namespace, through the API
// server, as kubectl port-forward does (WebSocket, else SPDY). It returns
// the local address once the forward is ready; the forward ends with ctx.
func PortForward(ctx context.Context, cfg *rest.Config, namespace, selector string, port int) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", fmt.Errorf("listing pods %s in %s: %w", selector, namespace, err)
	}
	pod := ""
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			pod = p.Name
			break
		}
	}
	if pod == "" {
		return "", fmt.Errorf("%w %s in namespace %s", ErrNoPod, selector, namespace)
	}
	url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return "", err
	}
	dialer := spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	if tunneling, err := portforward.NewSPDYOverWebsocketDialerForStreaming(url, cfg); err == nil {
		dialer = portforward.NewFallbackDialerForStreaming(tunneling, dialer, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
	}
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddressesForStreaming(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, ctx.Done(), ready, io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return "", fmt.Errorf("port forward to Pod/%s/%s: %w", namespace, pod, err)
	case <-ctx.Done():
		return "", ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		return "", fmt.Errorf("port forward to Pod/%s/%s: no local port: %v", namespace, pod, err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local))), nil
}
