package applicationset

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// DefaultRequeueAfter is how often generators that read outside state
// (Git) are run again when they name no period: Argo CD's three minutes.
const DefaultRequeueAfter = 3 * time.Minute

// maxNesting bounds matrix and merge generators inside one another: Argo
// CD allows two levels.
const maxNesting = 2

// Result is the parameter sets of one top-level generator and the
// template they are rendered into (the generator's own merged over the
// ApplicationSet's).
type Result struct {
	Params   []Params
	Template *v1alpha1.ApplicationSetTemplate
}

// generation is what one run of an ApplicationSet's generators needs.
type generation struct {
	ctx    context.Context
	appset *v1alpha1.ApplicationSet
	r      renderer
	src    Sources
	// requeue is the shortest period a generator asked to run again in;
	// zero when no generator reads outside state.
	requeue time.Duration
}

// wantRequeue records a generator's period, the default when unset.
func (g *generation) wantRequeue(seconds *int64) {
	d := DefaultRequeueAfter
	if g.src.RequeueAfter > 0 {
		d = g.src.RequeueAfter
	}
	if seconds != nil {
		d = time.Duration(*seconds) * time.Second
	}
	if d > 0 && (g.requeue == 0 || d < g.requeue) {
		g.requeue = d
	}
}

// Generate runs every generator of an ApplicationSet and returns their
// results in order, and how soon they want to run again (0: only when
// something they watch changes).
func Generate(ctx context.Context, as *v1alpha1.ApplicationSet, src Sources) ([]Result, time.Duration, error) {
	g := &generation{ctx: ctx, appset: as, r: rendererOf(as), src: src}
	var out []Result
	for i := range as.Spec.Generators {
		gen := &as.Spec.Generators[i]
		params, err := g.top(gen)
		if err != nil {
			return nil, g.requeue, err
		}
		tmpl, err := mergeTemplate(as.Spec.Template, templateOf(gen))
		if err != nil {
			return nil, g.requeue, err
		}
		out = append(out, Result{Params: params, Template: tmpl})
	}
	return out, g.requeue, nil
}

// top runs one top-level generator.
func (g *generation) top(gen *v1alpha1.ApplicationSetGenerator) ([]Params, error) {
	var params []Params
	var err error
	switch {
	case gen.Matrix != nil:
		params, err = g.matrix(gen.Matrix.Generators, 1)
	case gen.Merge != nil:
		params, err = g.merge(gen.Merge.Generators, gen.Merge.MergeKeys, 1)
	default:
		params, err = g.terminal(&gen.ApplicationSetTerminalGenerator)
	}
	if err != nil {
		return nil, err
	}
	return g.selectParams(params, gen.Selector)
}

// nested runs a generator inside a matrix or merge, depth levels down.
func (g *generation) nested(gen *v1alpha1.ApplicationSetNestedGenerator, depth int) ([]Params, error) {
	var params []Params
	var err error
	switch {
	case gen.Matrix != nil || gen.Merge != nil:
		if depth >= maxNesting {
			return nil, fmt.Errorf("matrix and merge generators nest at most %d levels deep", maxNesting)
		}
		params, err = g.rawNested(gen.Matrix, gen.Merge, depth+1)
	default:
		params, err = g.terminal(&gen.ApplicationSetTerminalGenerator)
	}
	if err != nil {
		return nil, err
	}
	return g.selectParams(params, gen.Selector)
}

// rawNested runs a matrix or merge generator kept as raw JSON.
func (g *generation) rawNested(matrix, merge *apiextensionsv1.JSON, depth int) ([]Params, error) {
	if matrix != nil {
		var m v1alpha1.MatrixGenerator
		if err := json.Unmarshal(matrix.Raw, &m); err != nil {
			return nil, fmt.Errorf("reading nested matrix generator: %w", err)
		}
		return g.matrix(m.Generators, depth)
	}
	var m v1alpha1.MergeGenerator
	if err := json.Unmarshal(merge.Raw, &m); err != nil {
		return nil, fmt.Errorf("reading nested merge generator: %w", err)
	}
	return g.merge(m.Generators, m.MergeKeys, depth)
}

// terminal runs a generator that does not nest others.
func (g *generation) terminal(gen *v1alpha1.ApplicationSetTerminalGenerator) ([]Params, error) {
	switch {
	case gen.List != nil:
		return g.list(gen.List)
	case gen.Clusters != nil:
		return g.clusters(gen.Clusters)
	case gen.Git != nil:
		g.wantRequeue(gen.Git.RequeueAfterSeconds)
		return g.git(gen.Git, "git")
	case gen.OCI != nil:
		// The OCI generator reads an artifact as the Git one reads a commit.
		g.wantRequeue(gen.OCI.RequeueAfterSeconds)
		return g.git((*v1alpha1.GitGenerator)(gen.OCI), "oci")
	case gen.SCMProvider != nil:
		return g.scmProvider(gen.SCMProvider)
	case gen.PullRequest != nil:
		return g.pullRequests(gen.PullRequest)
	case gen.ClusterDecisionResource != nil:
		return g.clusterDecisions(gen.ClusterDecisionResource)
	case gen.Plugin != nil:
		return g.pluginGenerator(gen.Plugin)
	}
	return nil, fmt.Errorf("a generator names no known generator (list, clusters, git, oci, matrix, merge, scmProvider, pullRequest, clusterDecisionResource, plugin)")
}

// selectParams keeps the parameter sets a generator's selector matches,
// read as labels of their flat form.
func (g *generation) selectParams(params []Params, sel *metav1.LabelSelector) ([]Params, error) {
	if sel == nil {
		return params, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("generator selector: %w", err)
	}
	var out []Params
	for _, p := range params {
		if s.Matches(labels.Set(p.flatten())) {
			out = append(out, p)
		}
	}
	return out, nil
}

// templateOf returns a top-level generator's own template, if any.
func templateOf(gen *v1alpha1.ApplicationSetGenerator) *v1alpha1.ApplicationSetTemplate {
	t := gen.ApplicationSetTerminalGenerator
	switch {
	case gen.Matrix != nil:
		return gen.Matrix.Template
	case gen.Merge != nil:
		return gen.Merge.Template
	case t.List != nil:
		return t.List.Template
	case t.Clusters != nil:
		return t.Clusters.Template
	case t.Git != nil:
		return t.Git.Template
	case t.OCI != nil:
		return t.OCI.Template
	case t.SCMProvider != nil:
		return t.SCMProvider.Template
	case t.PullRequest != nil:
		return t.PullRequest.Template
	case t.ClusterDecisionResource != nil:
		return t.ClusterDecisionResource.Template
	case t.Plugin != nil:
		return t.Plugin.Template
	}
	return nil
}

// withValues adds a generator's values, each rendered with the parameter
// set it joins, as values.<key> (flat) or under "values" (Go templates).
func (g *generation) withValues(p Params, values map[string]string) (Params, error) {
	if len(values) == 0 {
		return p, nil
	}
	var flat map[string]string
	if !g.r.goTemplate {
		flat = p.flatten()
	}
	rendered := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v, err := g.r.str(values[k], p, flat)
		if err != nil {
			return nil, fmt.Errorf("values.%s: %w", k, err)
		}
		if g.r.goTemplate {
			rendered[k] = v
		} else {
			p["values."+k] = v
		}
	}
	if g.r.goTemplate {
		p["values"] = rendered
	}
	return p, nil
}
