package localcluster

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
)

// InstallCRD creates crd (an existing one of the same name is kept) and
// waits up to a minute until the API server serves it.
func (c *Cluster) InstallCRD(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	cs, err := apiextensionsclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := installCRD(ctx, cs, crd); err != nil {
		t.Fatal(err)
	}
}
