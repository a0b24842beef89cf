package applicationset

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
)

// clusterInfo is what the clusters generator tells of one cluster.
type clusterInfo struct {
	name, server, project string
	labels, annotations   map[string]string
}

// clusters yields one parameter set per cluster Secret the selector
// matches, and the local cluster when the selector is empty and no Secret
// stands for it; with flatList, one set holding them all as "clusters".
func (g *generation) clusters(gen *v1alpha1.ClusterGenerator) ([]Params, error) {
	infos, err := g.clusterInfos(gen.Selector)
	if err != nil {
		return nil, err
	}
	var out []Params
	for _, c := range infos {
		p, err := g.withValues(g.clusterParams(c), gen.Values)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.name, err)
		}
		out = append(out, p)
	}
	if !gen.FlatList {
		return out, nil
	}
	all := make([]any, len(out))
	for i, p := range out {
		all[i] = map[string]any(p)
	}
	return []Params{{"clusters": all}}, nil
}

func (g *generation) clusterInfos(sel metav1.LabelSelector) ([]clusterInfo, error) {
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return nil, fmt.Errorf("clusters generator selector: %w", err)
	}
	isCluster, err := labels.NewRequirement(v1alpha1.LabelSecretType, selection.Equals, []string{v1alpha1.SecretTypeCluster})
	if err != nil {
		return nil, err
	}
	var secrets corev1.SecretList
	if err := g.src.Reader.List(g.ctx, &secrets, client.InNamespace(g.src.Namespace),
		client.MatchingLabelsSelector{Selector: s.Add(*isCluster)}); err != nil {
		return nil, fmt.Errorf("listing cluster Secrets in %s: %w", g.src.Namespace, err)
	}
	var out []clusterInfo
	local := false
	for i := range secrets.Items {
		sec := &secrets.Items[i]
		spec, err := cluster.SpecOf(sec)
		if err != nil {
			return nil, err
		}
		name := spec.Name
		if spec.Server == cluster.InClusterServer {
			local = true
			if name == "" || name == cluster.InClusterServer {
				name = cluster.InClusterName
			}
		}
		out = append(out, clusterInfo{name: name, server: spec.Server, project: spec.Project, labels: sec.Labels, annotations: sec.Annotations})
	}
	if !local && s.Empty() {
		out = append([]clusterInfo{{name: cluster.InClusterName, server: cluster.InClusterServer}}, out...)
	}
	return out, nil
}

// clusterParams are Argo CD's parameters for one cluster.
func (g *generation) clusterParams(c clusterInfo) Params {
	if g.r.goTemplate {
		return Params{
			"name": c.name, "nameNormalized": normalize(c.name), "server": c.server, "project": c.project,
			"metadata": map[string]any{"labels": anyMap(c.labels), "annotations": anyMap(c.annotations)},
		}
	}
	p := Params{"name": c.name, "nameNormalized": normalize(c.name), "server": c.server, "project": c.project}
	for k, v := range c.labels {
		p["metadata.labels."+k] = v
	}
	for k, v := range c.annotations {
		p["metadata.annotations."+k] = v
	}
	return p
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
