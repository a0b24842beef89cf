package settings

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// customizationsKey is where argocd-cm keeps per-kind resource
// customizations: resource.customizations.<field>.<group>_<kind> keys,
// and an older single map under the key itself.
const customizationsKey = "resource.customizations"

// legacyFields are the older map's names of the customization fields.
var legacyFields = map[string]string{"health": "health.lua", "actions": "actions", "ignoreDifferences": "ignoreDifferences",
	"ignoreResourceUpdates": "ignoreResourceUpdates", "knownTypeFields": "knownTypeFields"}

// Customization is one resource customization of argocd-cm.
type Customization struct {
	// Key is where it was read, for messages.
	Key string
	// Group and Kind are the kinds it is for, as written: "" is the core
	// group, "*" any (the key "all" is "*" and "*"); health checks also
	// take globs.
	Group, Kind string
	// Value is the customization, as written (YAML or Lua).
	Value string
}

// Customizations returns argocd-cm's customizations of one field
// ("health", "actions", "ignoreDifferences", "ignoreResourceUpdates",
// "knownTypeFields"): the resource.customizations.<field>.<group>_<kind>
// keys (<kind> alone for the core group, "all" for every kind), in key
// order, then the entries of the older resource.customizations map of
// "<group>/<Kind>" to the field. A map that cannot be read is an error;
// the keys are still returned.
func (a *ArgoCD) Customizations(field string) ([]Customization, error) {
	prefix := customizationsKey + "." + field + "."
	var out []Customization
	for _, k := range sortedKeys(a.Data) {
		if groupKind, ok := strings.CutPrefix(k, prefix); ok {
			group, kind := splitGroupKind(groupKind, "_")
			out = append(out, Customization{Key: k, Group: group, Kind: kind, Value: a.Data[k]})
		}
	}
	legacy := a.Data[customizationsKey]
	if legacy == "" {
		return out, nil
	}
	var m map[string]map[string]any
	if err := yaml.Unmarshal([]byte(legacy), &m); err != nil {
		return out, fmt.Errorf("argocd-cm %s: %w", customizationsKey, err)
	}
	var errs []error
	for _, gk := range sortedKeys(m) {
		v, ok := m[gk][legacyFields[field]]
		if !ok {
			continue
		}
		value, isString := v.(string)
		if !isString { // knownTypeFields is a list there
			data, err := yaml.Marshal(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("argocd-cm %s[%s]: %w", customizationsKey, gk, err))
				continue
			}
			value = string(data)
		}
		group, kind := splitGroupKind(gk, "/")
		out = append(out, Customization{Key: customizationsKey + "[" + gk + "]", Group: group, Kind: kind, Value: value})
	}
	return out, errors.Join(errs...)
}

// splitGroupKind reads "<group><sep><kind>", "<kind>" (the core group) or
// "all" (every kind).
func splitGroupKind(s, sep string) (group, kind string) {
	if s == "all" {
		return "*", "*"
	}
	if g, k, ok := strings.Cut(s, sep); ok {
		return g, k
	}
	return "", s
}

// IgnoreDifferencesFor returns the differences a comparison of app
// ignores: argocd-cm's resource.customizations.ignoreDifferences for
// kinds (jsonPointers, jqPathExpressions, managedFieldsManagers), then
// the Application's own spec.ignoreDifferences. A customization that
// cannot be read is left out and named in the error; the rest apply.
func (a *ArgoCD) IgnoreDifferencesFor(app *v1alpha1.Application) ([]v1alpha1.ResourceIgnoreDifferences, error) {
	rules, err := a.ignoreRules("ignoreDifferences")
	errs := []error{err}
	opts, err := a.CompareOptions()
	errs = append(errs, err)
	if opts.IgnoreAggregatedRoles {
		rules = append(rules, aggregatedRoles)
	}
	return append(rules, app.Spec.IgnoreDifferences...), errors.Join(errs...)
}

// ignoreRules reads the customizations of field ("ignoreDifferences" or
// "ignoreResourceUpdates") as ignore rules; one that cannot be read is
// named in the error and left out.
func (a *ArgoCD) ignoreRules(field string) ([]v1alpha1.ResourceIgnoreDifferences, error) {
	cs, err := a.Customizations(field)
	errs := []error{err}
	rules := make([]v1alpha1.ResourceIgnoreDifferences, 0, len(cs))
	for _, c := range cs {
		var r v1alpha1.ResourceIgnoreDifferences
		if err := yaml.UnmarshalStrict([]byte(c.Value), &r); err != nil {
			errs = append(errs, fmt.Errorf("argocd-cm %s: %w", c.Key, err))
			continue
		}
		r.Group, r.Kind, r.Name, r.Namespace = c.Group, c.Kind, "", ""
		rules = append(rules, r)
	}
	return rules, errors.Join(errs...)
}

// IgnoreResourceUpdates returns the rules of the fields whose changes do
// not refresh an Application, and false when resource.ignoreResourceUpdatesEnabled
// is "false" (Argo CD's default is on): the
// resource.customizations.ignoreResourceUpdates customizations, the
// ignoreDifferences ones too with compare option
// ignoreDifferencesOnResourceUpdates, and always an object's
// resourceVersion, generation and managed fields.
func (a *ArgoCD) IgnoreResourceUpdates() ([]v1alpha1.ResourceIgnoreDifferences, bool, error) {
	if a.Data["resource.ignoreResourceUpdatesEnabled"] == "false" {
		return nil, false, nil
	}
	rules, err := a.ignoreRules("ignoreResourceUpdates")
	errs := []error{err}
	opts, err := a.CompareOptions()
	errs = append(errs, err)
	if opts.IgnoreDifferencesOnResourceUpdates {
		more, err := a.ignoreRules("ignoreDifferences")
		rules = append(rules, more...)
		errs = append(errs, err)
	}
	rules = append(rules, v1alpha1.ResourceIgnoreDifferences{Group: "*", Kind: "*",
		JSONPointers: []string{"/metadata/resourceVersion", "/metadata/generation", "/metadata/managedFields"}})
	return rules, true, errors.Join(errs...)
}

// aggregatedRoles leaves out the rules of ClusterRoles that aggregate
// others: the API server fills them in.
var aggregatedRoles = v1alpha1.ResourceIgnoreDifferences{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole",
	JQPathExpressions: []string{"select(.aggregationRule != null) | .rules"}}

// CompareOptions is argocd-cm's resource.compareoptions.
type CompareOptions struct {
	// IgnoreAggregatedRoles leaves the rules of aggregating ClusterRoles
	// out of comparisons.
	IgnoreAggregatedRoles bool `json:"ignoreAggregatedRoles,omitempty"`
	// IgnoreResourceStatusField is which kinds' status is not compared:
	// "crd" (Argo CD's default) or "all". Capstan never compares status
	// (a sync's server-side apply does not write it), so "none" or "off"
	// cannot be honoured and is reported.
	IgnoreResourceStatusField string `json:"ignoreResourceStatusField,omitempty"`
	// IgnoreDifferencesOnResourceUpdates applies ignoreDifferences to
	// resource.ignoreResourceUpdates too.
	IgnoreDifferencesOnResourceUpdates bool `json:"ignoreDifferencesOnResourceUpdates,omitempty"`
}

// CompareOptions reads resource.compareoptions; what cannot be read or
// honoured is an error, and the rest applies.
func (a *ArgoCD) CompareOptions() (CompareOptions, error) {
	var o CompareOptions
	raw, ok := a.Data["resource.compareoptions"]
	if !ok {
		return o, nil
	}
	if err := yaml.Unmarshal([]byte(raw), &o); err != nil {
		return CompareOptions{}, fmt.Errorf("argocd-cm resource.compareoptions: %w", err)
	}
	switch o.IgnoreResourceStatusField {
	case "", "crd", "all":
		return o, nil
	case "none", "off":
		return o, fmt.Errorf("argocd-cm resource.compareoptions: ignoreResourceStatusField %q is not supported: Capstan never compares status fields", o.IgnoreResourceStatusField)
	}
	return o, fmt.Errorf("argocd-cm resource.compareoptions: ignoreResourceStatusField %q: want crd, all or none", o.IgnoreResourceStatusField)
}
