package kustomize

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

// BuildOptions are the `kustomize build` flags of argocd-cm's
// kustomize.buildOptions that an in-process build honours. Flags that
// would run programs (plugins, exec functions, another helm) are refused
// by name.
type BuildOptions struct {
	// LoadRestrictionsNone lets a kustomization read files outside its
	// directory (--load-restrictor LoadRestrictionsNone); the build still
	// never leaves the repository's checkout.
	LoadRestrictionsNone bool
	// Reorder is --reorder: legacy or none; "" leaves Kustomize's default.
	Reorder string
	// ManagedByLabel is --enable-managedby-label.
	ManagedByLabel bool
	// Helm is --enable-helm and the --helm-* flags: whether helmCharts
	// are inflated, and with what.
	Helm HelmOptions
}

// HelmOptions are how a build inflates a kustomization's helmCharts.
// Capstan serves the helm commands Kustomize runs itself (see relay.go).
type HelmOptions struct {
	// Enabled is --enable-helm; off, a kustomization with helmCharts fails
	// to build, as with Kustomize.
	Enabled bool
	// KubeVersion (--helm-kube-version) and APIVersions
	// (--helm-api-versions) are the capabilities charts see; they win over
	// the Application's and the destination cluster's.
	KubeVersion string
	APIVersions []string
}

// ParseBuildOptions reads kustomize.buildOptions ("--load-restrictor
// LoadRestrictionsNone --reorder none", flags with "=" or a space).
func ParseBuildOptions(s string) (BuildOptions, error) {
	var o BuildOptions
	var err error
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
		case "--enable-helm":
			o.Helm.Enabled = true
		case "--helm-debug":
			// Kustomize prints Helm's output with its errors; Capstan's
			// errors already carry Helm's message.
		case "--helm-kube-version":
			if o.Helm.KubeVersion, err = takeValue(); err != nil {
				return o, err
			}
		case "--helm-api-versions":
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			o.Helm.APIVersions = append(o.Helm.APIVersions, strings.Split(v, ",")...)
		case "--helm-command":
			return o, fmt.Errorf("kustomize.buildOptions: --helm-command is not supported (Capstan runs Helm for Kustomize in-process)")
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
