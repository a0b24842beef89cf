package applicationset

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

const (
	// defaultStatusListKey is the status list a decision resource's
	// ConfigMap reads when it names none, as in Argo CD.
	defaultStatusListKey = "clusters"
	// maxDecisions bounds the decisions read from all matched resources.
	maxDecisions = 10000
)

// decisionSource is what a clusterDecisionResource ConfigMap says: which
// resource holds the decisions, under which status list, and which key of
// each decision names an Argo CD cluster.
type decisionSource struct {
	gvr           schema.GroupVersionResource
	statusListKey string
	matchKey      string
}

// clusterDecisions yields one parameter set per decision that names a
// known cluster: the cluster's name and server, and every key of the
// decision as a string (Argo CD's duck-typed generator).
func (g *generation) clusterDecisions(gen *v1alpha1.DuckTypeGenerator) ([]Params, error) {
	g.wantRequeue(gen.RequeueAfterSeconds)
	src, err := g.decisionSource(gen.ConfigMapRef)
	if err != nil || src.matchKey == "" {
		return nil, err // no matchKey: no decisions, as in Argo CD
	}
	decisions, err := g.decisions(gen, src)
	if err != nil {
		return nil, err
	}
	infos, err := g.clusterInfos(metav1.LabelSelector{})
	if err != nil {
		return nil, err
	}
	byName := make(map[string]clusterInfo, len(infos))
	for _, c := range infos {
		byName[c.name] = c
	}
	var out []Params
	for _, d := range decisions {
		c, ok := byName[fmt.Sprint(d[src.matchKey])]
		if d[src.matchKey] == nil || !ok {
			continue
		}
		p := Params{"name": c.name, "server": c.server}
		for k, v := range d {
			p[k] = fmt.Sprint(v)
		}
		if p, err = g.withValues(p, gen.Values); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// decisionSource reads the generator's ConfigMap from the control
// namespace.
func (g *generation) decisionSource(name string) (decisionSource, error) {
	field := "clusterDecisionResource.configMapRef"
	if g.src.Reader == nil {
		return decisionSource{}, fmt.Errorf("%s: no client to read ConfigMaps", field)
	}
	var cm corev1.ConfigMap
	if err := g.src.Reader.Get(g.ctx, client.ObjectKey{Namespace: g.src.Namespace, Name: name}, &cm); err != nil {
		return decisionSource{}, fmt.Errorf("%s: ConfigMap %s/%s: %w", field, g.src.Namespace, name, err)
	}
	gv, err := schema.ParseGroupVersion(cm.Data["apiVersion"])
	if err != nil || gv.Group == "" || cm.Data["kind"] == "" {
		return decisionSource{}, fmt.Errorf("%s: ConfigMap %s/%s needs apiVersion <group>/<version> and kind", field, g.src.Namespace, name)
	}
	src := decisionSource{gvr: gv.WithResource(cm.Data["kind"]), statusListKey: cm.Data["statusListKey"], matchKey: cm.Data["matchKey"]}
	if src.statusListKey == "" {
		src.statusListKey = defaultStatusListKey
	}
	return src, nil
}

// decisions lists the resources the generator selects (by name or by
// labels, in the control namespace) and gathers their status lists.
func (g *generation) decisions(gen *v1alpha1.DuckTypeGenerator, src decisionSource) ([]map[string]any, error) {
	bySelector := len(gen.LabelSelector.MatchLabels) > 0 || len(gen.LabelSelector.MatchExpressions) > 0
	if (gen.Name == "") == !bySelector {
		return nil, errors.New("clusterDecisionResource: set either name or labelSelector")
	}
	gvk, err := g.kindOf(src.gvr)
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.InNamespace(g.src.Namespace)}
	if bySelector {
		sel, err := metav1.LabelSelectorAsSelector(&gen.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("clusterDecisionResource.labelSelector: %w", err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	} else {
		opts = append(opts, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", gen.Name)})
	}
	if err := g.src.Reader.List(g.ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing %s in %s: %w", src.gvr, g.src.Namespace, err)
	}
	if len(list.Items) == 0 {
		return nil, errors.New("no clusterDecisionResources found")
	}
	var out []map[string]any
	for i := range list.Items {
		items, err := statusList(&list.Items[i], src.statusListKey)
		if err != nil {
			return nil, err
		}
		if len(out)+len(items) > maxDecisions {
			return nil, fmt.Errorf("clusterDecisionResource: more than %d decisions", maxDecisions)
		}
		out = append(out, items...)
	}
	return out, nil
}

// statusList reads status.<key> of one decision resource: a list of
// objects (a resource without a status yet has none).
func statusList(u *unstructured.Unstructured, key string) ([]map[string]any, error) {
	raw, found, err := unstructured.NestedFieldNoCopy(u.Object, "status", key)
	if err != nil || !found {
		return nil, nil
	}
	items, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s/%s/%s: status.%s is not a list", u.GetKind(), u.GetNamespace(), u.GetName(), key)
	}
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s/%s/%s: status.%s holds a non-object", u.GetKind(), u.GetNamespace(), u.GetName(), key)
		}
		out = append(out, m)
	}
	return out, nil
}

// kindOf maps the ConfigMap's resource (Argo CD's "kind" key holds the
// plural resource name; a singular or Kind name works too) to its kind.
func (g *generation) kindOf(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	m, ok := g.src.Reader.(interface{ RESTMapper() meta.RESTMapper })
	if !ok {
		return schema.GroupVersionKind{}, errors.New("clusterDecisionResource: no REST mapping to resolve resources")
	}
	gvk, err := m.RESTMapper().KindFor(gvr)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("clusterDecisionResource: resource %s: %w", gvr, err)
	}
	return gvk, nil
}
