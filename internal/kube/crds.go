package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/manifests/crds"
)

// FieldManager is the server-side apply field manager of everything Capstan
// itself writes to a cluster.
const FieldManager = "capstan"

// InstallCRDs server-side applies Capstan's CRDs and waits until the API
// server serves them. Server-side apply is required: the Application CRD is
// too large for the last-applied annotation of a client-side apply.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	all, err := crds.All()
	if err != nil {
		return err
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range all {
		crd.APIVersion = apiextensionsv1.SchemeGroupVersion.String()
		crd.Kind = "CustomResourceDefinition"
		data, err := json.Marshal(crd)
		if err != nil {
			return err
		}
		force := true
		if _, err := api.Patch(ctx, crd.Name, types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: FieldManager, Force: &force}); err != nil {
			return fmt.Errorf("applying CustomResourceDefinition/%s: %w", crd.Name, err)
		}
	}
	for _, crd := range all {
		if err := waitEstablished(ctx, cs, crd.Name); err != nil {
			return err
		}
	}
	// Discovery, which clients map kinds through, lists a new kind a
	// moment after it is established.
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	for _, crd := range all {
		if err := waitDiscovered(ctx, disco, crd); err != nil {
			return err
		}
	}
	return nil
}

func waitDiscovered(ctx context.Context, disco discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	gv := crd.Spec.Group + "/" + crd.Spec.Versions[0].Name
	for {
		list, err := disco.ServerResourcesForGroupVersion(gv)
		if err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Spec.Names.Plural }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for discovery to list CustomResourceDefinition/%s: %w", crd.Name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func waitEstablished(ctx context.Context, cs apiextensionsclient.Interface, name string) error {
	for {
		crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err == nil && established(crd) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for CustomResourceDefinition/%s to be established: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
