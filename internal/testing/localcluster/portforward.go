package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// portForwards is kwok's PortForward resource: the port forwards of the
// fake pod of the same name and namespace.
var portForwards = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "portforwards"}

// installKwokCRDs creates the kwok resource definitions in path (made by
// `make kube` from kwok's module) and waits until they are served, so kwok
// finds them when it starts.
func (c *Cluster) installKwokCRDs(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cs, err := apiextensionsclient.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal([]byte(doc), crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := installCRD(ctx, cs, crd); err != nil {
			return err
		}
	}
	return nil
}

// installCRD creates crd and waits until it is served.
func installCRD(ctx context.Context, cs apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := api.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating CustomResourceDefinition/%s: %w", crd.Name, err)
	}
	for {
		got, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil && established(got) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CustomResourceDefinition/%s not established: %w", crd.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// ForwardPort makes port of the fake pod namespace/pod reach target, an
// address on this machine ("127.0.0.1:8080"): a port forward to the pod
// through the API server (kubectl port-forward, client-go's portforward)
// then connects to target.
func (c *Cluster) ForwardPort(ctx context.Context, namespace, pod string, port int32, target string) error {
	host, targetPort, err := net.SplitHostPort(target)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(targetPort)
	if err != nil {
		return fmt.Errorf("target %q: %w", target, err)
	}
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "PortForward",
		"metadata": map[string]any{"name": pod, "namespace": namespace},
		"spec": map[string]any{"forwards": []any{map[string]any{
			"ports":  []any{int64(port)},
			"target": map[string]any{"address": host, "port": int64(p)},
		}}},
	}}
	if _, err := dc.Resource(portForwards).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating PortForward/%s/%s: %w", namespace, pod, err)
	}
	return nil
}

// execs is kwok's Exec resource: how commands run in the containers of
// the fake pod of the same name and namespace.
var execs = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "execs"}

// AllowExec makes commands run in the containers of the fake pod
// namespace/pod (kubectl exec, a terminal) run on this machine, in workDir:
// tests only.
func (c *Cluster) AllowExec(ctx context.Context, namespace, pod, workDir string) error {
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Exec",
		"metadata": map[string]any{"name": pod, "namespace": namespace},
		"spec": map[string]any{"execs": []any{map[string]any{
			"local": map[string]any{"workDir": workDir},
		}}},
	}}
	if _, err := dc.Resource(execs).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Exec/%s/%s: %w", namespace, pod, err)
	}
	return nil
}
