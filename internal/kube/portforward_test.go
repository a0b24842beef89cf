package kube

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	for {
		if addr, err = PortForward(ctx, cluster.Config, ns, "app=web", 8080); !errors.Is(err, ErrNoPod) {
			break
		}
		time.Sleep(100 * time.Millisecond) // until kwok runs the pod
	}
	if err != nil {
		t.Fatal(err)
	}
	// kwok learns of the PortForward object by watching: until then a
	// connection through the forward is closed at once.
	for {
		body, err := get(ctx, "http://"+addr)
		if err == nil {
			if body != "through the pod" {
				t.Errorf("through the forward: %q", body)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
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
