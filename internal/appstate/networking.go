package appstate

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/internal/engine"
)

// NetworkingInfo is how a node takes part in the app's traffic, as Argo
// CD's resource tree reports it for its network view: a Service's
// selector (TargetLabels), an Ingress's backends (TargetRefs), a Pod's
// Labels, the load balancers' addresses and the URLs users reach.
type NetworkingInfo struct {
	TargetLabels map[string]string            `json:"targetLabels,omitempty"`
	TargetRefs   []ResourceRef                `json:"targetRefs,omitempty"`
	Labels       map[string]string            `json:"labels,omitempty"`
	Ingress      []corev1.LoadBalancerIngress `json:"ingress,omitempty"`
	ExternalURLs []string                     `json:"externalURLs,omitempty"`
}

// HostInfo is a cluster node running the app's Pods: its system, labels
// and the CPU and memory the app's Pods request of its capacity (Argo
// CD's pods view groups Pods by it).
type HostInfo struct {
	Name          string                `json:"name,omitempty"`
	ResourcesInfo []HostResourceInfo    `json:"resourcesInfo,omitempty"`
	SystemInfo    corev1.NodeSystemInfo `json:"systemInfo,omitempty"`
	Labels        map[string]string     `json:"labels,omitempty"`
}

// HostResourceInfo is one resource of a host: its capacity and what the
// app's Pods on it request (millicores for cpu, bytes for memory).
type HostResourceInfo struct {
	ResourceName   corev1.ResourceName `json:"resourceName,omitempty"`
	RequestedByApp int64               `json:"requestedByApp,omitempty"`
	Capacity       int64               `json:"capacity,omitempty"`
}

// linkPrefix starts the annotations that add links to a resource, as
// Argo CD's link.argocd.argoproj.io/<name>: a URL or "title|URL".
const linkPrefix = "link.argocd.argoproj.io/"

// ignoreDefaultLinks on an Ingress ("true") keeps its hosts from the
// links, leaving only annotated ones.
const ignoreDefaultLinks = "argocd.argoproj.io/ignore-default-links"

// networking is obj's NetworkingInfo, nil when it has none.
func networking(obj *unstructured.Unstructured) *NetworkingInfo {
	info := &NetworkingInfo{ExternalURLs: annotatedLinks(obj.GetAnnotations())}
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Service":
		info.TargetLabels, _, _ = unstructured.NestedStringMap(obj.Object, "spec", "selector")
		if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t == string(corev1.ServiceTypeLoadBalancer) {
			info.Ingress = loadBalancers(obj)
		}
	case gvk.Kind == "Ingress" && (gvk.Group == "networking.k8s.io" || gvk.Group == "extensions"):
		info.Ingress = loadBalancers(obj)
		var urls []string
		info.TargetRefs, urls = ingressRoutes(obj, info.Ingress)
		if obj.GetAnnotations()[ignoreDefaultLinks] != "true" {
			info.ExternalURLs = append(info.ExternalURLs, urls...)
		}
	case gvk.Group == "" && gvk.Kind == "Pod":
		info.Labels = obj.GetLabels()
	}
	if info.TargetLabels == nil && info.TargetRefs == nil && info.Labels == nil && info.Ingress == nil && info.ExternalURLs == nil {
		return nil
	}
	return info
}

// annotatedLinks are the http(s) links of the link annotations, sorted;
// others (javascript:, data:) are dropped, as the UI would show them as
// links.
func annotatedLinks(annotations map[string]string) []string {
	var out []string
	for k, v := range annotations {
		if !strings.HasPrefix(k, linkPrefix) {
			continue
		}
		target := v
		if _, after, ok := strings.Cut(v, "|"); ok {
			target = after
		}
		if u, err := url.Parse(target); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// loadBalancers reads status.loadBalancer.ingress.
func loadBalancers(obj *unstructured.Unstructured) []corev1.LoadBalancerIngress {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	var out []corev1.LoadBalancerIngress
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var lb corev1.LoadBalancerIngress
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &lb) == nil {
			out = append(out, lb)
		}
	}
	return out
}

// ingressRoutes are an Ingress's backend Services and the URLs of its
// rules: https when a TLS entry names the host (or any TLS entry has a
// Secret), the rule's path without a trailing "*"; a rule without a host
// takes the load balancer's.
func ingressRoutes(obj *unstructured.Unstructured, lbs []corev1.LoadBalancerIngress) ([]ResourceRef, []string) {
	services := map[string]bool{}
	addBackend := func(backend map[string]any) {
		if name := backendService(backend); name != "" {
			services[name] = true
		}
	}
	if b, ok, _ := unstructured.NestedMap(obj.Object, "spec", "defaultBackend"); ok {
		addBackend(b)
	}
	if b, ok, _ := unstructured.NestedMap(obj.Object, "spec", "backend"); ok {
		addBackend(b)
	}
	tls, _, _ := unstructured.NestedSlice(obj.Object, "spec", "tls")
	urls := map[string]bool{}
	rules, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
	for _, r := range rules {
		rule, ok := r.(map[string]any)
		if !ok {
			continue
		}
		host, _ := rule["host"].(string)
		for _, lb := range lbs {
			if host == "" {
				host = firstNonEmpty(lb.Hostname, lb.IP)
			}
		}
		paths, _, _ := unstructured.NestedSlice(rule, "http", "paths")
		for _, p := range paths {
			path, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if b, ok := path["backend"].(map[string]any); ok {
				addBackend(b)
			}
			if host == "" {
				continue
			}
			sub, _ := path["path"].(string)
			urls[schemeOf(tls, host)+"://"+host+strings.TrimSuffix(sub, "*")] = true
		}
	}
	var refs []ResourceRef
	for name := range services {
		refs = append(refs, ResourceRef{Version: "v1", Kind: "Service", Namespace: obj.GetNamespace(), Name: name})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	out := make([]string, 0, len(urls))
	for u := range urls {
		out = append(out, u)
	}
	sort.Strings(out)
	return refs, out
}

// backendService names the Service of a backend: networking.k8s.io/v1's
// service.name or the older serviceName.
func backendService(backend map[string]any) string {
	if name, ok, _ := unstructured.NestedString(backend, "service", "name"); ok {
		return name
	}
	name, _ := backend["serviceName"].(string)
	return name
}

// schemeOf is https when the Ingress's TLS covers host, http otherwise.
func schemeOf(tls []any, host string) string {
	for _, t := range tls {
		entry, ok := t.(map[string]any)
		if !ok {
			continue
		}
		if s, _ := entry["secretName"].(string); s != "" {
			return "https"
		}
		hosts, _ := entry["hosts"].([]any)
		for _, h := range hosts {
			if h == host {
				return "https"
			}
		}
	}
	return "http"
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// revisionInfo is a Deployment's or ReplicaSet's rollout revision, as
// Argo CD shows it beside the node ("Rev:3").
func revisionInfo(obj *unstructured.Unstructured) []InfoItem {
	if rev, err := strconv.Atoi(obj.GetAnnotations()["deployment.kubernetes.io/revision"]); err == nil && rev > 0 {
		return []InfoItem{{Name: "Revision", Value: fmt.Sprintf("Rev:%d", rev)}}
	}
	return nil
}

// maxHosts bounds the nodes a tree reads for its Pods' hosts.
const maxHosts = 100

// hosts are the cluster nodes the tree's Pods run on, with what the
// app's Pods request of them, and those of their labels that
// application.allowedNodeLabels allows. A node that cannot be read is
// left out.
func hosts(ctx context.Context, d *engine.Destination, pods []*corev1.Pod, allowedLabels []string) []HostInfo {
	requested := map[string]map[corev1.ResourceName]int64{}
	var names []string
	for _, p := range pods {
		node := p.Spec.NodeName
		if node == "" {
			continue
		}
		if requested[node] == nil {
			if len(names) == maxHosts {
				continue
			}
			requested[node] = map[corev1.ResourceName]int64{}
			names = append(names, node)
		}
		for _, c := range p.Spec.Containers {
			requested[node][corev1.ResourceCPU] += c.Resources.Requests.Cpu().MilliValue()
			requested[node][corev1.ResourceMemory] += c.Resources.Requests.Memory().Value()
		}
	}
	sort.Strings(names)
	var out []HostInfo
	for _, name := range names {
		obj, err := d.Read(ctx, schema.GroupVersionKind{Version: "v1", Kind: "Node"}, "", name)
		if err != nil || obj == nil {
			continue
		}
		var node corev1.Node
		if runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &node) != nil {
			continue
		}
		var labels map[string]string
		for _, k := range allowedLabels {
			if v, ok := node.Labels[k]; ok {
				if labels == nil {
					labels = map[string]string{}
				}
				labels[k] = v
			}
		}
		out = append(out, HostInfo{Name: name, SystemInfo: node.Status.NodeInfo, Labels: labels, ResourcesInfo: []HostResourceInfo{
			{ResourceName: corev1.ResourceCPU, RequestedByApp: requested[name][corev1.ResourceCPU], Capacity: node.Status.Capacity.Cpu().MilliValue()},
			{ResourceName: corev1.ResourceMemory, RequestedByApp: requested[name][corev1.ResourceMemory], Capacity: node.Status.Capacity.Memory().Value()},
		}})
	}
	return out
}
