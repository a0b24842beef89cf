package appstate

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestNetworking(t *testing.T) {
	for _, tc := range []struct {
		name, manifest string
		want           *NetworkingInfo
	}{
		{"a ConfigMap has none", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", nil},
		{"a Service's selector, no addresses unless a load balancer", `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, type: ClusterIP}
status: {loadBalancer: {ingress: [{ip: 10.0.0.9}]}}
`, &NetworkingInfo{TargetLabels: map[string]string{"app": "web"}}},
		{"a load balancer's address", `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, type: LoadBalancer}
status: {loadBalancer: {ingress: [{ip: 10.0.0.9}]}}
`, &NetworkingInfo{TargetLabels: map[string]string{"app": "web"}, Ingress: []corev1.LoadBalancerIngress{{IP: "10.0.0.9"}}}},
		{"an Ingress's services and URLs, https where TLS names the host, links annotated", `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    link.argocd.argoproj.io/docs: "Docs|https://docs.example.com"
    link.argocd.argoproj.io/evil: "javascript:alert(1)"
spec:
  defaultBackend: {service: {name: fallback}}
  tls: [{hosts: [shop.example.com]}]
  rules:
  - host: shop.example.com
    http: {paths: [{path: /api*, backend: {service: {name: api}}}, {path: /, backend: {service: {name: web}}}]}
  - host: admin.example.com
    http: {paths: [{path: /, backend: {service: {name: admin}}}]}
`, &NetworkingInfo{
			TargetRefs: []ResourceRef{{Version: "v1", Kind: "Service", Namespace: "shop", Name: "admin"}, {Version: "v1", Kind: "Service", Namespace: "shop", Name: "api"},
				{Version: "v1", Kind: "Service", Namespace: "shop", Name: "fallback"}, {Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"}},
			ExternalURLs: []string{"Docs|https://docs.example.com", "http://admin.example.com/", "https://shop.example.com/", "https://shop.example.com/api"}}},
		{"an Ingress without a host takes its load balancer's; default links can be turned off", `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop, annotations: {argocd.argoproj.io/ignore-default-links: "true"}}
spec: {rules: [{http: {paths: [{path: /, backend: {service: {name: web}}}]}}]}
status: {loadBalancer: {ingress: [{hostname: lb.example.net}]}}
`, &NetworkingInfo{TargetRefs: []ResourceRef{{Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"}}, Ingress: []corev1.LoadBalancerIngress{{Hostname: "lb.example.net"}}}},
		{"a Pod's labels", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: web}}\n",
			&NetworkingInfo{Labels: map[string]string{"app": "web"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(tc.manifest), &obj.Object); err != nil {
				t.Fatal(err)
			}
			got := networking(&obj)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
