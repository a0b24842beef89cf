package cli

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// sourceFlags are Argo CD's flags for the Helm, Kustomize, directory,
// Jsonnet and plugin settings of one source.
type sourceFlags struct {
	ref, sourceName                                    string
	helmVersion, helmNamespace, helmKubeVersion        string
	valuesLiteralFile                                  string
	helmSetFiles, helmAPIVersions                      []string
	helmPassCredentials, helmSkipCrds                  bool
	helmSkipSchema, helmSkipTests, ignoreMissingValues bool
	namePrefix, nameSuffix, kustomizeVersion           string
	kustomizeNamespace, kustomizeKubeVersion           string
	commonLabels, commonAnnotations, replicas          []string
	kustomizeAPIVersions                               []string
	forceLabels, forceAnnotations, withoutSelector     bool
	includeTemplates, ignoreMissingComponents          bool
	dirExclude, dirInclude                             string
	anyExtension                                       bool
	extVarStr, extVarCode, tlaStr, tlaCode, libs       []string
	plugin                                             string
	pluginEnv                                          []string
}

func (s *sourceFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&s.ref, "ref", "", "name other sources refer to this one's files by ($name/values.yaml)")
	fs.StringVar(&s.sourceName, "source-name", "", "name of the source")
	fs.StringVar(&s.helmVersion, "helm-version", "", "Helm version (v3)")
	fs.StringVar(&s.helmNamespace, "helm-namespace", "", "namespace Helm renders into (default: the destination's)")
	fs.StringVar(&s.helmKubeVersion, "helm-kube-version", "", "Kubernetes version Helm renders for (default: the cluster's)")
	fs.StringArrayVar(&s.helmAPIVersions, "helm-api-versions", nil, "API versions Helm's Capabilities report (repeatable)")
	fs.StringArrayVar(&s.helmSetFiles, "helm-set-file", nil, "Helm parameter NAME=PATH read from a file of the repository (repeatable)")
	fs.BoolVar(&s.helmPassCredentials, "helm-pass-credentials", false, "pass the repository's credentials to every domain the chart pulls from")
	fs.BoolVar(&s.helmSkipCrds, "helm-skip-crds", false, "do not install the chart's CRDs")
	fs.BoolVar(&s.helmSkipSchema, "helm-skip-schema-validation", false, "do not validate values against the chart's schema")
	fs.BoolVar(&s.helmSkipTests, "helm-skip-tests", false, "leave the chart's test manifests out")
	fs.BoolVar(&s.ignoreMissingValues, "ignore-missing-value-files", false, "ignore --values files that do not exist")
	fs.StringVar(&s.valuesLiteralFile, "values-literal-file", "", "local file whose content becomes the source's inline Helm values")
	fs.StringVar(&s.namePrefix, "nameprefix", "", "Kustomize name prefix")
	fs.StringVar(&s.nameSuffix, "namesuffix", "", "Kustomize name suffix")
	fs.StringVar(&s.kustomizeVersion, "kustomize-version", "", "Kustomize version")
	fs.StringVar(&s.kustomizeNamespace, "kustomize-namespace", "", "Kustomize namespace")
	fs.StringVar(&s.kustomizeKubeVersion, "kustomize-kube-version", "", "Kubernetes version Helm charts inside Kustomize render for")
	fs.StringArrayVar(&s.kustomizeAPIVersions, "kustomize-api-versions", nil, "API versions Helm charts inside Kustomize see (repeatable)")
	fs.StringArrayVar(&s.commonLabels, "kustomize-common-label", nil, "common label KEY=VALUE (repeatable)")
	fs.StringArrayVar(&s.commonAnnotations, "kustomize-common-annotation", nil, "common annotation KEY=VALUE (repeatable)")
	fs.StringArrayVar(&s.replicas, "kustomize-replica", nil, "replica count NAME=COUNT (repeatable)")
	fs.BoolVar(&s.forceLabels, "kustomize-force-common-label", false, "override existing labels with the common ones")
	fs.BoolVar(&s.forceAnnotations, "kustomize-force-common-annotation", false, "override existing annotations with the common ones")
	fs.BoolVar(&s.withoutSelector, "kustomize-label-without-selector", false, "do not add the common labels to selectors")
	fs.BoolVar(&s.includeTemplates, "kustomize-label-include-templates", false, "add the common labels to pod templates too")
	fs.BoolVar(&s.ignoreMissingComponents, "ignore-missing-components", false, "ignore Kustomize components that do not exist")
	fs.StringVar(&s.dirExclude, "directory-exclude", "", "glob of the manifests to leave out, such as '{config.json,env-usw2/*}'")
	fs.StringVar(&s.dirInclude, "directory-include", "", "glob of the manifests to read, such as '*.yaml'")
	fs.BoolVar(&s.anyExtension, "directory-disable-extension-filter", false, "read files of any extension (such as *.yaml.sealed), left to --directory-include and --directory-exclude to pick; otherwise only .yaml, .yml, .json and .jsonnet files")
	fs.StringArrayVar(&s.extVarStr, "jsonnet-ext-var-str", nil, "Jsonnet external variable NAME=VALUE (repeatable)")
	fs.StringArrayVar(&s.extVarCode, "jsonnet-ext-var-code", nil, "Jsonnet external variable NAME=CODE (repeatable)")
	fs.StringArrayVar(&s.tlaStr, "jsonnet-tla-str", nil, "Jsonnet top-level argument NAME=VALUE (repeatable)")
	fs.StringArrayVar(&s.tlaCode, "jsonnet-tla-code", nil, "Jsonnet top-level argument NAME=CODE (repeatable)")
	fs.StringArrayVar(&s.libs, "jsonnet-libs", nil, "Jsonnet library path (repeatable)")
	fs.StringVar(&s.plugin, "config-management-plugin", "", "config management plugin name")
	fs.StringArrayVar(&s.pluginEnv, "plugin-env", nil, "plugin environment variable NAME=VALUE (repeatable)")
}

// keyValues reads NAME=VALUE flags.
func keyValues(flag string, values []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range values {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s %q is not NAME=VALUE", flag, kv)
		}
		out[k] = v
	}
	return out, nil
}

// apply changes src by the source flags that were given.
func (s *sourceFlags) apply(fs *pflag.FlagSet, src *v1alpha1.ApplicationSource) error {
	changed := fs.Changed
	str := func(flag string, dst *string, v string) {
		if changed(flag) {
			*dst = v
		}
	}
	flag := func(name string, dst *bool, v bool) {
		if changed(name) {
			*dst = v
		}
	}
	str("ref", &src.Ref, s.ref)
	str("source-name", &src.Name, s.sourceName)
	if err := s.applyHelm(fs, src, str, flag); err != nil {
		return err
	}
	if err := s.applyKustomize(fs, src, str, flag); err != nil {
		return err
	}
	if err := s.applyDirectory(fs, src, str); err != nil {
		return err
	}
	if changed("config-management-plugin") || changed("plugin-env") {
		if src.Plugin == nil {
			src.Plugin = &v1alpha1.ApplicationSourcePlugin{}
		}
		str("config-management-plugin", &src.Plugin.Name, s.plugin)
		env, err := keyValues("plugin-env", s.pluginEnv)
		if err != nil {
			return err
		}
		for _, k := range sortedKeys(env) {
			src.Plugin.Env = append(src.Plugin.Env, &v1alpha1.EnvEntry{Name: k, Value: env[k]})
		}
	}
	return nil
}

func (s *sourceFlags) applyHelm(fs *pflag.FlagSet, src *v1alpha1.ApplicationSource, str func(string, *string, string), flag func(string, *bool, bool)) error {
	names := []string{"helm-version", "helm-namespace", "helm-kube-version", "helm-api-versions", "helm-set-file", "helm-pass-credentials",
		"helm-skip-crds", "helm-skip-schema-validation", "helm-skip-tests", "ignore-missing-value-files", "values-literal-file"}
	if !anyChanged(fs, names) {
		return nil
	}
	if src.Helm == nil {
		src.Helm = &v1alpha1.ApplicationSourceHelm{}
	}
	h := src.Helm
	str("helm-version", &h.Version, s.helmVersion)
	str("helm-namespace", &h.Namespace, s.helmNamespace)
	str("helm-kube-version", &h.KubeVersion, s.helmKubeVersion)
	if fs.Changed("helm-api-versions") {
		h.APIVersions = s.helmAPIVersions
	}
	flag("helm-pass-credentials", &h.PassCredentials, s.helmPassCredentials)
	flag("helm-skip-crds", &h.SkipCrds, s.helmSkipCrds)
	flag("helm-skip-schema-validation", &h.SkipSchemaValidation, s.helmSkipSchema)
	flag("helm-skip-tests", &h.SkipTests, s.helmSkipTests)
	flag("ignore-missing-value-files", &h.IgnoreMissingValueFiles, s.ignoreMissingValues)
	files, err := keyValues("helm-set-file", s.helmSetFiles)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(files) {
		h.FileParameters = append(h.FileParameters, v1alpha1.HelmFileParameter{Name: name, Path: files[name]})
	}
	if s.valuesLiteralFile != "" {
		data, err := os.ReadFile(s.valuesLiteralFile)
		if err != nil {
			return fmt.Errorf("--values-literal-file: %w", err)
		}
		h.Values = string(data)
	}
	return nil
}

func (s *sourceFlags) applyKustomize(fs *pflag.FlagSet, src *v1alpha1.ApplicationSource, str func(string, *string, string), flag func(string, *bool, bool)) error {
	names := []string{"nameprefix", "namesuffix", "kustomize-version", "kustomize-namespace", "kustomize-kube-version", "kustomize-api-versions",
		"kustomize-common-label", "kustomize-common-annotation", "kustomize-replica", "kustomize-force-common-label",
		"kustomize-force-common-annotation", "kustomize-label-without-selector", "kustomize-label-include-templates", "ignore-missing-components"}
	if !anyChanged(fs, names) {
		return nil
	}
	if src.Kustomize == nil {
		src.Kustomize = &v1alpha1.ApplicationSourceKustomize{}
	}
	k := src.Kustomize
	str("nameprefix", &k.NamePrefix, s.namePrefix)
	str("namesuffix", &k.NameSuffix, s.nameSuffix)
	str("kustomize-version", &k.Version, s.kustomizeVersion)
	str("kustomize-namespace", &k.Namespace, s.kustomizeNamespace)
	str("kustomize-kube-version", &k.KubeVersion, s.kustomizeKubeVersion)
	if fs.Changed("kustomize-api-versions") {
		k.APIVersions = s.kustomizeAPIVersions
	}
	flag("kustomize-force-common-label", &k.ForceCommonLabels, s.forceLabels)
	flag("kustomize-force-common-annotation", &k.ForceCommonAnnotations, s.forceAnnotations)
	flag("kustomize-label-without-selector", &k.LabelWithoutSelector, s.withoutSelector)
	flag("kustomize-label-include-templates", &k.LabelIncludeTemplates, s.includeTemplates)
	flag("ignore-missing-components", &k.IgnoreMissingComponents, s.ignoreMissingComponents)
	for _, m := range []struct {
		flag   string
		values []string
		dst    *map[string]string
	}{{"kustomize-common-label", s.commonLabels, &k.CommonLabels}, {"kustomize-common-annotation", s.commonAnnotations, &k.CommonAnnotations}} {
		kv, err := keyValues(m.flag, m.values)
		if err != nil {
			return err
		}
		for key, v := range kv {
			if *m.dst == nil {
				*m.dst = map[string]string{}
			}
			(*m.dst)[key] = v
		}
	}
	reps, err := keyValues("kustomize-replica", s.replicas)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(reps) {
		n, err := strconv.Atoi(reps[name])
		if err != nil || n < 0 {
			return fmt.Errorf("--kustomize-replica %s=%s: the count must be a whole number", name, reps[name])
		}
		k.Replicas = append(k.Replicas, v1alpha1.KustomizeReplica{Name: name, Count: intstr.FromInt(n)})
	}
	return nil
}

func (s *sourceFlags) applyDirectory(fs *pflag.FlagSet, src *v1alpha1.ApplicationSource, str func(string, *string, string)) error {
	names := []string{"directory-exclude", "directory-include", "directory-disable-extension-filter", "jsonnet-ext-var-str", "jsonnet-ext-var-code", "jsonnet-tla-str", "jsonnet-tla-code", "jsonnet-libs"}
	if !anyChanged(fs, names) {
		return nil
	}
	if src.Directory == nil {
		src.Directory = &v1alpha1.ApplicationSourceDirectory{}
	}
	d := src.Directory
	str("directory-exclude", &d.Exclude, s.dirExclude)
	str("directory-include", &d.Include, s.dirInclude)
	if fs.Changed("directory-disable-extension-filter") {
		d.DisableExtensionFilter = s.anyExtension
	}
	d.Jsonnet.Libs = append(d.Jsonnet.Libs, s.libs...)
	for _, v := range []struct {
		flag   string
		values []string
		code   bool
		dst    *[]v1alpha1.JsonnetVar
	}{{"jsonnet-ext-var-str", s.extVarStr, false, &d.Jsonnet.ExtVars}, {"jsonnet-ext-var-code", s.extVarCode, true, &d.Jsonnet.ExtVars},
		{"jsonnet-tla-str", s.tlaStr, false, &d.Jsonnet.TLAs}, {"jsonnet-tla-code", s.tlaCode, true, &d.Jsonnet.TLAs}} {
		kv, err := keyValues(v.flag, v.values)
		if err != nil {
			return err
		}
		for _, name := range sortedKeys(kv) {
			*v.dst = append(*v.dst, v1alpha1.JsonnetVar{Name: name, Value: kv[name], Code: v.code})
		}
	}
	return nil
}

func anyChanged(fs *pflag.FlagSet, names []string) bool {
	for _, n := range names {
		if fs.Changed(n) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
