package applicationset

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/valyala/fasttemplate"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/safetext"
)

// renderer substitutes parameters into strings, in Argo CD's two modes.
type renderer struct {
	// goTemplate selects text/template with Sprig; otherwise {{param}}
	// substitution, leaving unknown parameters as written.
	goTemplate bool
	// options are text/template options (goTemplateOptions).
	options []string
}

func rendererOf(as *v1alpha1.ApplicationSet) renderer {
	return renderer{goTemplate: as.Spec.GoTemplate, options: as.Spec.GoTemplateOptions}
}

// funcs are Argo CD's additions to the functions templates run with
// (safetext's: Sprig's, without those that read the controller's
// environment or the network).
var funcs = template.FuncMap{"normalize": normalize, "slugify": slugifyFunc, "toYaml": toYAML, "fromYaml": fromYAML, "fromYamlArray": fromYAMLArray}

// maxRendered bounds one rendered string of a template (and, as
// safetext's budget, 16 times that of what its functions build).
const maxRendered = 1 << 20

// parsed keeps the templates parsed lately, by options and text: sets
// render the same strings for every element their generators make.
var parsed, _ = lru.New[string, *safetext.Template](1024)

// parse returns the template of s with the renderer's options, parsed
// once.
func (r renderer) parse(s string) (*safetext.Template, error) {
	key := strings.Join(r.options, ",") + "\x00" + s
	if t, ok := parsed.Get(key); ok {
		return t, nil
	}
	t, err := safetext.Parse("", s, funcs, r.options...)
	if err != nil {
		return nil, err
	}
	parsed.Add(key, t)
	return t, nil
}

// slugifyFunc is slugify as templates call it: `slugify .x`, or with a
// maximum size and the smart-truncate switch first: `slugify 20 false .x`.
func slugifyFunc(args ...any) (string, error) {
	maxSize, smart := 50, true
	if len(args) == 0 {
		return "", fmt.Errorf("slugify: no string given")
	}
	s, ok := args[len(args)-1].(string)
	if !ok {
		return "", fmt.Errorf("slugify: the last argument is %T, want a string", args[len(args)-1])
	}
	if len(args) > 1 {
		n, ok := args[0].(int)
		if !ok {
			return "", fmt.Errorf("slugify: the maximum size is %T, want a number", args[0])
		}
		maxSize = n
	}
	if len(args) > 2 {
		b, ok := args[1].(bool)
		if !ok {
			return "", fmt.Errorf("slugify: smart truncate is %T, want true or false", args[1])
		}
		smart = b
	}
	return slugify(maxSize, smart, s), nil
}

func toYAML(v any) (string, error) {
	out, err := yaml.Marshal(v)
	return strings.TrimSuffix(string(out), "\n"), err
}

func fromYAML(s string) (map[string]any, error) {
	out := map[string]any{}
	err := yaml.Unmarshal([]byte(s), &out)
	return out, err
}

func fromYAMLArray(s string) ([]any, error) {
	var out []any
	err := yaml.Unmarshal([]byte(s), &out)
	return out, err
}

// str renders one string.
func (r renderer) str(s string, params Params, flat map[string]string) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	if !r.goTemplate {
		return fasttemplate.ExecuteFuncStringWithErr(s, "{{", "}}", func(w io.Writer, tag string) (int, error) {
			if v, ok := flat[strings.TrimSpace(tag)]; ok {
				return io.WriteString(w, v)
			}
			return io.WriteString(w, "{{"+tag+"}}")
		})
	}
	t, err := r.parse(s)
	if err != nil {
		return "", fmt.Errorf("parsing template %q: %w", safetext.Truncate(s, 256), err)
	}
	out, err := t.Execute(map[string]any(params), maxRendered, "the rendered string")
	if err != nil {
		return "", fmt.Errorf("executing template %q: %w", safetext.Truncate(s, 256), err)
	}
	return out, nil
}

// value renders every string of a decoded JSON value, map keys included,
// except under the keys in skip (at the top level only).
func (r renderer) value(v any, params Params, flat map[string]string, skip ...string) (any, error) {
	switch v := v.(type) {
	case string:
		return r.str(v, params, flat)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			var err error
			if out[i], err = r.value(e, params, flat); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if slices.Contains(skip, k) {
				out[k] = e
				continue
			}
			key, err := r.str(k, params, flat)
			if err != nil {
				return nil, err
			}
			if out[key], err = r.value(e, params, flat); err != nil {
				return nil, err
			}
		}
		return out, nil
	default:
		return v, nil
	}
}

// into renders the strings of in (any JSON-encodable value) with params
// and decodes the result into out; keys in skip are left as they are.
func (r renderer) into(in, out any, params Params, skip ...string) error {
	var generic any
	if err := roundTrip(in, &generic); err != nil {
		return err
	}
	var flat map[string]string
	if !r.goTemplate {
		flat = params.flatten()
	}
	rendered, err := r.value(generic, params, flat, skip...)
	if err != nil {
		return err
	}
	return roundTrip(rendered, out)
}

// roundTrip copies in to out through JSON.
func roundTrip(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// application renders the template, then the template patch, for one
// parameter set. The result has no namespace or owner yet.
func (r renderer) application(tmpl *v1alpha1.ApplicationSetTemplate, patch *string, params Params) (*v1alpha1.Application, error) {
	var out v1alpha1.ApplicationSetTemplate
	if err := r.into(tmpl, &out, params); err != nil {
		return nil, err
	}
	app := &v1alpha1.Application{
		TypeMeta: metav1TypeMeta,
		Spec:     out.Spec,
	}
	app.Name, app.Labels, app.Annotations, app.Finalizers = out.Name, out.Labels, out.Annotations, out.Finalizers
	if patch == nil || strings.TrimSpace(*patch) == "" {
		return app, nil
	}
	if !r.goTemplate {
		return nil, fmt.Errorf("templatePatch needs goTemplate: true")
	}
	text, err := r.str(*patch, params, nil)
	if err != nil {
		return nil, fmt.Errorf("templatePatch: %w", err)
	}
	return applyPatch(app, text)
}

// applyPatch applies a strategic-merge patch, YAML or JSON, to app.
func applyPatch(app *v1alpha1.Application, patch string) (*v1alpha1.Application, error) {
	patchJSON, err := yaml.YAMLToJSON([]byte(patch))
	if err != nil {
		return nil, fmt.Errorf("templatePatch is not YAML or JSON: %w", err)
	}
	orig, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, patchJSON, v1alpha1.Application{})
	if err != nil {
		return nil, fmt.Errorf("applying templatePatch: %w", err)
	}
	out := &v1alpha1.Application{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, fmt.Errorf("applying templatePatch: %w", err)
	}
	return out, nil
}

// mergeTemplate returns base with the set fields of override (a
// generator's own template) in their place, fields nested in objects
// merged one by one.
func mergeTemplate(base v1alpha1.ApplicationSetTemplate, override *v1alpha1.ApplicationSetTemplate) (*v1alpha1.ApplicationSetTemplate, error) {
	if override == nil {
		return &base, nil
	}
	var b, o map[string]any
	if err := roundTrip(base, &b); err != nil {
		return nil, err
	}
	if err := roundTrip(override, &o); err != nil {
		return nil, err
	}
	out := &v1alpha1.ApplicationSetTemplate{}
	return out, roundTrip(mergeSet(b, o), out)
}

// mergeSet merges the non-empty values of o into b.
func mergeSet(b, o map[string]any) map[string]any {
	for k, v := range o {
		if isEmpty(v) {
			continue
		}
		if om, ok := v.(map[string]any); ok {
			if bm, ok := b[k].(map[string]any); ok {
				b[k] = mergeSet(bm, om)
				continue
			}
		}
		b[k] = v
	}
	return b
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case float64:
		return v == 0
	case map[string]any:
		for _, e := range v {
			if !isEmpty(e) {
				return false
			}
		}
		return true
	case []any:
		return len(v) == 0
	}
	return false
}
