package applicationset

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// list yields the list generator's elements, and those of elementsYaml.
func (g *generation) list(gen *v1alpha1.ListGenerator) ([]Params, error) {
	var out []Params
	for i, e := range gen.Elements {
		var m map[string]any
		if err := json.Unmarshal(e.Raw, &m); err != nil {
			return nil, fmt.Errorf("list element %d is not an object: %w", i, err)
		}
		out = append(out, g.element(m))
	}
	if gen.ElementsYaml != "" {
		var elems []map[string]any
		if err := yaml.Unmarshal([]byte(gen.ElementsYaml), &elems); err != nil {
			return nil, fmt.Errorf("elementsYaml is not a YAML list of objects: %w", err)
		}
		for _, m := range elems {
			out = append(out, g.element(m))
		}
	}
	return out, nil
}

// element turns one list element into parameters: as it is for Go
// templates, flattened to dotted keys otherwise.
func (g *generation) element(m map[string]any) Params {
	if g.r.goTemplate {
		return Params(m)
	}
	p := Params{}
	for k, v := range Params(m).flatten() {
		p[k] = v
	}
	return p
}
