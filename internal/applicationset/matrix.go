package applicationset

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Argo CD's errors for a matrix without exactly two generators.
var (
	errMatrixTooFew  = errors.New("found less than two generators, Matrix support only two")
	errMatrixTooMany = errors.New("found more than two generators, Matrix support only two")
)

// errNotUnique is Argo CD's error for a merge whose parameter sets are not
// unique by the merge keys.
var errNotUnique = errors.New("the parameters from a generator were not unique by the given mergeKeys, Merge requires all param sets to be unique")

// matrix combines every parameter set of the first generator with every
// set of the second; the second generator's fields may use the first's
// parameters (a Git generator's repoURL from a cluster's values, say).
func (g *generation) matrix(gens []v1alpha1.ApplicationSetNestedGenerator, depth int) ([]Params, error) {
	switch {
	case len(gens) < 2:
		return nil, errMatrixTooFew
	case len(gens) > 2:
		return nil, errMatrixTooMany
	}
	first, err := g.nested(&gens[0], depth)
	if err != nil {
		return nil, fmt.Errorf("matrix: first generator: %w", err)
	}
	var out []Params
	for _, p := range first {
		var second v1alpha1.ApplicationSetNestedGenerator
		if err := g.r.into(gens[1], &second, p, "template"); err != nil {
			return nil, fmt.Errorf("matrix: filling the second generator with the first's parameters: %w", err)
		}
		ps, err := g.nested(&second, depth)
		if err != nil {
			return nil, fmt.Errorf("matrix: second generator: %w", err)
		}
		for _, q := range ps {
			m, err := p.merged(q, g.r.goTemplate)
			if err != nil {
				return nil, fmt.Errorf("matrix: %w", err)
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// merge returns the first generator's parameter sets, each merged with
// the sets of later generators whose merge-key values equal its own
// (later generators winning); sets no first-generator set matches are
// dropped.
func (g *generation) merge(gens []v1alpha1.ApplicationSetNestedGenerator, keys []string, depth int) ([]Params, error) {
	if len(gens) < 2 {
		return nil, errors.New("found less than two generators, Merge requires two or more")
	}
	if len(keys) == 0 {
		return nil, errors.New("no merge keys were specified, Merge requires at least one")
	}
	base, err := g.nested(&gens[0], depth)
	if err != nil {
		return nil, fmt.Errorf("merge: first generator: %w", err)
	}
	byKey, order, err := indexByKeys(base, keys)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(gens); i++ {
		ps, err := g.nested(&gens[i], depth)
		if err != nil {
			return nil, fmt.Errorf("merge: generator %d: %w", i+1, err)
		}
		other, _, err := indexByKeys(ps, keys)
		if err != nil {
			return nil, err
		}
		for k, q := range other {
			p, ok := byKey[k]
			if !ok {
				continue
			}
			if g.r.goTemplate {
				byKey[k] = Params(deepMerge(map[string]any(p), map[string]any(q)).(map[string]any))
				continue
			}
			for qk, qv := range q {
				p[qk] = qv
			}
		}
	}
	out := make([]Params, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out, nil
}

// indexByKeys indexes parameter sets by the values of the merge keys.
func indexByKeys(params []Params, keys []string) (map[string]Params, []string, error) {
	out := make(map[string]Params, len(params))
	order := make([]string, 0, len(params))
	for _, p := range params {
		flat := p.flatten()
		vals := make([]string, len(keys))
		for i, k := range keys {
			vals[i] = flat[k]
		}
		raw, _ := json.Marshal(vals)
		key := string(raw)
		if _, dup := out[key]; dup {
			return nil, nil, fmt.Errorf("%w. Duplicate key was %s", errNotUnique, key)
		}
		out[key] = p
		order = append(order, key)
	}
	return out, order, nil
}
