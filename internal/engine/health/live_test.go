package health

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{Workloads: true}, &cluster))
}

// TestLiveDeployment follows a real Deployment from creation to Available:
// its health moves from Progressing to Healthy, as the controller will see it.
func TestLiveDeployment(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	deployments := dynamic.NewForConfigOrDie(cluster.Config).Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns)
	d := obj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	created, err := deployments.Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NewChecker(nil)
	first, err := c.Check(created)
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != v1alpha1.HealthStatusProgressing {
		t.Errorf("a just-created Deployment is %s, want Progressing", first.Status)
	}
	eventually.Within(t, eventually.Options{Timeout: 2 * time.Minute, Interval: 200 * time.Millisecond}, "the Deployment Healthy", func() string {
		live, err := deployments.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Check(live)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != v1alpha1.HealthStatusHealthy {
			return fmt.Sprintf("%s %q, status %v", st.Status, st.Message, live.Object["status"])
		}
		return ""
	})
}
