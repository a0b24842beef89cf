package kube

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestPortForward reaches a server on this machine through a port forward
// to a pod of the local cluster's fake node, which kwok sends on to it.
func TestPortForward(t *testing.T) {
	localcluster.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := cluster.NewNamespace(t)
	if _, err := PortForward(ctx, cluster.Config, ns, "app=web", 8080); !errors.Is(err, ErrNoPod) {
		t.Errorf("no pod: %v, want ErrNoPod", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "through the pod") })}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	cs, err := cluster.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.ForwardPort(ctx, ns, "web", 8080, l.Addr().String()); err != nil {
		t.Fatal(err)
	}
	var addr string
	eventually.String(t, "kwok running the pod", func() string {
		if addr, err = PortForward(ctx, cluster.Config, ns, "app=web", 8080); errors.Is(err, ErrNoPod) {
			return err.Error()
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	// kwok learns of the PortForward object by watching: until then a
	// connection through the forward is closed at once.
	var body string
	eventually.NoError(t, "a connection through the forward", func() error {
		body, err = get(ctx, "http://"+addr)
		return err
	})
	if body != "through the pod" {
		t.Errorf("through the forward: %q", body)
	}
}

func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}
