package kustomize

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

// BuildOptions are the `kustomize build` flags of argocd-cm's
// kustomize.buildOptions that an in-process build honours. Flags that
// would run programs (plugins, exec functions, Helm) are refused by name.
type BuildOptions struct {
	// LoadRestrictionsNone lets a kustomization read files outside its
	// directory (--load-restrictor LoadRestrictionsNone); the build still
	// never leaves the repository's checkout.
	LoadRestrictionsNone bool
	// Reorder is --reorder: legacy or none; "" leaves Kustomize's default.
	Reorder string
	// ManagedByLabel is --enable-managedby-label.
	ManagedByLabel bool
}

// ParseBuildOptions reads kustomize.buildOptions ("--load-restrictor
// LoadRestrictionsNone --reorder none", flags with "=" or a space).
func ParseBuildOptions(s string) (BuildOptions, error) {
	var o BuildOptions
	fields := strings.Fields(s)
	for i := 0; i < len(fields); i++ {
		flag, value, hasValue := strings.Cut(fields[i], "=")
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(fields) {
				return "", fmt.Errorf("kustomize.buildOptions: %s needs a value", flag)
			}
			i++
			return fields[i], nil
		}
		switch flag {
		case "--load-restrictor", "--load_restrictor":
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			switch v {
			case "LoadRestrictionsNone":
				o.LoadRestrictionsNone = true
			case "LoadRestrictionsRootOnly":
				o.LoadRestrictionsNone = false
			default:
				return o, fmt.Errorf("kustomize.buildOptions: --load-restrictor %q: want LoadRestrictionsRootOnly or LoadRestrictionsNone", v)
			}
		case "--reorder":
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			if v != "legacy" && v != "none" {
				return o, fmt.Errorf("kustomize.buildOptions: --reorder %q: want legacy or none", v)
			}
			o.Reorder = v
		case "--enable-managedby-label":
			o.ManagedByLabel = true
		default:
			return o, fmt.Errorf("kustomize.buildOptions: %s is not supported (Capstan builds Kustomize in-process and runs no plugins or programs)", flag)
		}
	}
	return o, nil
}

// krustyOptions are the build's options.
func (o BuildOptions) krustyOptions() *krusty.Options {
	k := krusty.MakeDefaultOptions()
	if o.LoadRestrictionsNone {
		k.LoadRestrictions = types.LoadRestrictionsNone
	}
	switch o.Reorder {
	case "legacy":
		k.Reorder = krusty.ReorderOptionLegacy
	case "none":
		k.Reorder = krusty.ReorderOptionNone
	}
	k.AddManagedbyLabel = o.ManagedByLabel
	return k
}
