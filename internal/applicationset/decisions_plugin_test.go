package applicationset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// placementDecisions is a duck-typed decision resource like Open Cluster
// Management's PlacementDecision: status.decisions lists clusters.
func placementDecisions() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "placementdecisions.duck.capstan.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "duck.capstan.test", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "placementdecisions", Singular: "placementdecision",
				Kind: "PlacementDecision", ListKind: "PlacementDecisionList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
}

// TestClusterDecisionResource: Applications follow the clusters a
// duck-typed decision resource's status lists, matched to cluster Secrets
// by the ConfigMap's matchKey, with every key of a decision as a
// parameter; a decision naming no known cluster yields nothing.
func TestClusterDecisionResource(t *testing.T) {
	e := start(t, nil)
	testCluster.InstallCRD(t, placementDecisions())
	ctx := context.Background()
	for _, obj := range []client.Object{
		clusterSecret(e.ns, "east", "https://east.example", nil),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ocm-placement", Namespace: e.ns}, Data: map[string]string{
			"apiVersion": "duck.capstan.test/v1", "kind": "placementdecisions", "statusListKey": "decisions", "matchKey": "clusterName"}},
	} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	decision := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "duck.capstan.test/v1", "kind": "PlacementDecision",
		"metadata": map[string]any{"name": "web", "namespace": e.ns, "labels": map[string]any{"placement": "web"}},
		"status": map[string]any{"decisions": []any{
			map[string]any{"clusterName": "east", "reason": "fits"},
			map[string]any{"clusterName": "nowhere", "reason": "unknown cluster"},
		}},
	}}
	if err := e.client.Create(ctx, decision); err != nil {
		t.Fatal(err)
	}
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "placed", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			ClusterDecisionResource: &v1alpha1.DuckTypeGenerator{ConfigMapRef: "ocm-placement", RequeueAfterSeconds: ptr.To[int64](1),
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"placement": "web"}},
				Values:        map[string]string{"tier": "front"}},
		}}},
		Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{name}}-web",
				Annotations: map[string]string{"placed": "{{server}} {{clusterName}} {{reason}} {{values.tier}}"}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/web.git", Path: "deploy"},
				Destination: v1alpha1.ApplicationDestination{Server: "{{server}}", Namespace: "web"}},
		},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	app := e.waitApps("east-web")["east-web"]
	if got, want := app.Annotations["placed"], "https://east.example east fits front"; got != want {
		t.Errorf("parameters %q, want %q", got, want)
	}
	// The decision moves to the local cluster: the Applications follow.
	if err := unstructured.SetNestedSlice(decision.Object, []any{map[string]any{"clusterName": "in-cluster"}}, "status", "decisions"); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Update(ctx, decision); err != nil {
		t.Fatal(err)
	}
	e.waitApps("in-cluster-web")
}

// TestPluginGenerator: Applications from the parameter sets a plugin
// service answers over Argo CD's plugin protocol, with its token read
// from the Secret the ConfigMap names and the generator's input passed
// through; a failing service stops generation with a condition that
// names the plugin and never the token.
func TestPluginGenerator(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	var failing atomic.Bool
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ApplicationSetName string `json:"applicationSetName"`
			Input              struct {
				Parameters struct {
					Envs []string `json:"envs"`
				} `json:"parameters"`
			} `json:"input"`
		}
		if r.URL.Path != "/api/v1/getparams.execute" || r.Header.Get("Authorization") != "Bearer plugin-t0ken" {
			http.Error(w, `{"message":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		if failing.Load() || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"message":"backend down"}`, http.StatusInternalServerError)
			return
		}
		var sets []map[string]any
		for _, env := range req.Input.Parameters.Envs {
			sets = append(sets, map[string]any{"env": env, "owner": map[string]any{"set": req.ApplicationSetName}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"output": map[string]any{"parameters": sets}})
	}))
	defer svc.Close()
	for _, obj := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "plugin-secret", Namespace: e.ns}, StringData: map[string]string{"token": "plugin-t0ken"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "envs-plugin", Namespace: e.ns}, Data: map[string]string{
			"baseUrl": svc.URL, "token": "$plugin-secret:token", "requestTimeout": "5"}},
	} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "envs", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		GoTemplate: true,
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			Plugin: &v1alpha1.PluginGenerator{ConfigMapRef: v1alpha1.PluginConfigMapRef{Name: "envs-plugin"}, RequeueAfterSeconds: ptr.To[int64](1),
				Input: v1alpha1.PluginInput{Parameters: map[string]apiextensionsv1.JSON{
					"envs": {Raw: []byte(`["dev","prod"]`)}, "team": {Raw: []byte(`"shop"`)}}}},
		}}},
		Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "shop-{{.env}}",
				Annotations: map[string]string{"plugin": "{{.owner.set}} {{.generator.input.parameters.team}}"}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/shop.git", Path: "envs/{{.env}}"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop-{{.env}}"}},
		},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	apps := e.waitApps("shop-dev", "shop-prod")
	if got := apps["shop-dev"].Annotations["plugin"]; got != "envs shop" {
		t.Errorf("parameters %q, want %q", got, "envs shop")
	}
	failing.Store(true)
	e.eventually("ErrorOccurred", func() string {
		c := e.condition("envs", v1alpha1.ApplicationSetConditionErrorOccurred)
		if c.Status != v1alpha1.ApplicationSetConditionStatusTrue || !strings.Contains(c.Message, "envs-plugin") || !strings.Contains(c.Message, "backend down") {
			return fmt.Sprintf("%s %q", c.Status, c.Message)
		}
		if strings.Contains(c.Message, "plugin-t0ken") {
			t.Fatalf("the condition shows the token: %s", c.Message)
		}
		return ""
	})
	if len(e.apps()) != 2 {
		t.Errorf("a failing plugin changed the Applications: %v", e.apps())
	}
}
