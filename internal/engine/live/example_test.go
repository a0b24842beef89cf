package live

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/internal/engine/tracking"
)

func ExampleCache_ManagedBy() {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(exampleConfig())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "example-live", Namespace: "default",
		Annotations: map[string]string{"argocd.argoproj.io/tracking-id": "guestbook:/ConfigMap:default/example-live"}}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		panic(err)
	}

	c, err := New(exampleConfig(), Options{Tracking: tracking.Annotation})
	if err != nil {
		panic(err)
	}
	defer c.Stop()
	if err := c.Watch(ctx, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}); err != nil {
		panic(err)
	}
	for _, obj := range c.ManagedBy("guestbook") {
		fmt.Println(obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
	// Output: ConfigMap default example-live
}
