package controller

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// externalLinkPrefix marks annotations whose values are links to show
// with the Application (link.argocd.argoproj.io/external-link and others).
const externalLinkPrefix = "link.argocd.argoproj.io/"

// externalURLs returns the URLs a live object publishes, as Argo CD lists
// them in status.summary.externalURLs: an Ingress's hosts and paths
// (https when the host has TLS), or its load balancer's address when a
// rule names no host, and the object's link.argocd.argoproj.io/ annotations.
func externalURLs(obj *unstructured.Unstructured) []string {
	var out []string
	for k, v := range obj.GetAnnotations() {
		if strings.HasPrefix(k, externalLinkPrefix) && (strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")) {
			out = append(out, v)
		}
	}
	gvk := obj.GroupVersionKind()
	if gvk.Kind != "Ingress" || (gvk.Group != "networking.k8s.io" && gvk.Group != "extensions") {
		return out
	}
	var tlsHosts []string
	tls, _, _ := unstructured.NestedSlice(obj.Object, "spec", "tls")
	for _, t := range tls {
		if m, ok := t.(map[string]any); ok {
			hosts, _, _ := unstructured.NestedStringSlice(m, "hosts")
			tlsHosts = append(tlsHosts, hosts...)
		}
	}
	var lbHosts []string
	lbs, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	for _, lb := range lbs {
		if m, ok := lb.(map[string]any); ok {
			if h, _ := m["hostname"].(string); h != "" {
				lbHosts = append(lbHosts, h)
			} else if ip, _ := m["ip"].(string); ip != "" {
				lbHosts = append(lbHosts, ip)
			}
		}
	}
	rules, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
	for _, r := range rules {
		rule, ok := r.(map[string]any)
		if !ok {
			continue
		}
		hosts := lbHosts
		if h, _ := rule["host"].(string); h != "" {
			if strings.HasPrefix(h, "*") {
				continue // a wildcard host is no address to visit
			}
			hosts = []string{h}
		}
		paths, _, _ := unstructured.NestedSlice(rule, "http", "paths")
		for _, host := range hosts {
			scheme := "http"
			if slices.Contains(tlsHosts, host) {
				scheme = "https"
			}
			if len(paths) == 0 {
				out = append(out, fmt.Sprintf("%s://%s/", scheme, host))
			}
			for _, p := range paths {
				path, _ := p.(map[string]any)["path"].(string)
				out = append(out, fmt.Sprintf("%s://%s%s", scheme, host, path))
			}
		}
	}
	return out
}
