// Package kustomize renders a Kustomize source in-process with the
// Kustomize API, applying the Application's kustomize overrides to the
// kustomization the way Argo CD's `kustomize edit` calls do, without
// touching the checkout on disk.
package kustomize

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/repo/render/helm"
)

// KustomizationFile returns the kustomization file in dir, if there is one.
func KustomizationFile(dir string) (string, bool) {
	name, ok := KustomizationFileIn(os.DirFS(dir))
	if !ok {
		return "", false
	}
	return filepath.Join(dir, name), true
}

// KustomizationFileIn is KustomizationFile for a directory given as a file
// system: the name of its kustomization file.
func KustomizationFileIn(dir fs.FS) (string, bool) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if st, err := fs.Stat(dir, name); err == nil && !st.IsDir() {
			return name, true
		}
	}
	return "", false
}

// Input is one kustomization to build.
type Input struct {
	// Root is the checkout; every file the build reads stays inside it.
	Root string
	// Path is the kustomization's directory, relative to Root.
	Path string
	// Kustomize holds the source's overrides; may be nil.
	Kustomize *v1alpha1.ApplicationSourceKustomize
	// Build are argocd-cm's kustomize.buildOptions.
	Build BuildOptions
	// Env is the build environment used by commonAnnotationsEnvsubst.
	Env map[string]string
	// KubeVersion and APIVersions are the destination cluster's
	// capabilities, seen by helmCharts unless the source's kustomize
	// options or Build.Helm name others.
	KubeVersion string
	APIVersions []string
	// Charts fetches the helmCharts that are not in the checkout. Nil:
	// they must be.
	Charts helm.DependencyFetcher
	// RelayProgram is the executable Kustomize runs as helm: one that
	// calls RunHelmRelay when run as HelmRelayName, as Capstan's binary
	// does. Default: this program.
	RelayProgram string
	// Binary, when set, builds with that Kustomize program instead of the
	// built-in Kustomize; Build is not used.
	Binary *Binary
}

// Render builds the kustomization with the source's overrides and
// argocd-cm's build options.
func Render(ctx context.Context, in Input) ([]*unstructured.Unstructured, error) {
	realRoot, err := pathsafe.Root(in.Root)
	if err != nil {
		return nil, err
	}
	appDir, err := pathsafe.Join(realRoot, in.Path)
	if err != nil {
		return nil, err
	}
	if err := pathsafe.CheckTree(realRoot, appDir); err != nil {
		return nil, err
	}
	kfile, ok := KustomizationFile(appDir)
	if !ok {
		return nil, fmt.Errorf("no kustomization file in %q", in.Path)
	}

	fs := &boundedFS{FileSystem: filesys.MakeFsOnDisk(), root: realRoot, mounts: &mounts{}}
	if opts := in.Kustomize; opts != nil {
		data, err := os.ReadFile(kfile)
		if err != nil {
			return nil, err
		}
		edited, err := edit(data, realRoot, appDir, opts, in.Env)
		if err != nil {
			return nil, fmt.Errorf("applying kustomize overrides to %s: %w", filepath.Join(in.Path, filepath.Base(kfile)), err)
		}
		fs.overrides = map[string][]byte{kfile: edited}
	}
	if in.Binary != nil {
		objs, err := buildWith(ctx, in.Binary, realRoot, appDir, kfile, fs.overrides[kfile], in.Env)
		if err != nil {
			return nil, fmt.Errorf("kustomize build %q: %w", in.Path, err)
		}
		return objs, nil
	}
	kopts := in.Build.krustyOptions()
	if in.Build.Helm.Enabled {
		relay, err := in.startRelay(ctx, realRoot, fs.mounts)
		if err != nil {
			return nil, fmt.Errorf("kustomize build %q: %w", in.Path, err)
		}
		defer relay.close()
		kopts.PluginConfig.HelmConfig = in.helmConfig(relay.command())
	}

	// Kustomize takes no context: a build that outlives ctx is abandoned.
	type result struct {
		objs []*unstructured.Unstructured
		err  error
	}
	done := make(chan result, 1)
	go func() {
		objs, err := run(fs, appDir, kopts)
		done <- result{objs, err}
	}()
	var res result
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("kustomize build %q: %w", in.Path, ctx.Err())
	case res = <-done:
	}
	objs, err := res.objs, res.err
	if refused := fs.refusal(); refused != nil && err != nil {
		return nil, fmt.Errorf("kustomize build %q: %w", in.Path, refused)
	}
	if err != nil {
		return nil, fmt.Errorf("kustomize build %q: %w", in.Path, err)
	}
	return objs, nil
}

// startRelay starts serving the build's helm commands.
func (in *Input) startRelay(ctx context.Context, root string, m *mounts) (*helmRelay, error) {
	program := in.RelayProgram
	if program == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding this program to serve Kustomize's helm: %w", err)
		}
		program = self
	}
	return startHelmRelay(ctx, program, root, in.Charts, m)
}

// helmConfig is how Kustomize runs helm for this build: the source's
// capabilities win over the build options', which win over the cluster's.
func (in *Input) helmConfig(command string) types.HelmConfig {
	c := types.HelmConfig{Enabled: true, Command: command,
		KubeVersion: cmp.Or(in.Build.Helm.KubeVersion, in.KubeVersion), ApiVersions: in.Build.Helm.APIVersions}
	if len(c.ApiVersions) == 0 {
		c.ApiVersions = in.APIVersions
	}
	if k := in.Kustomize; k != nil {
		c.KubeVersion = cmp.Or(k.KubeVersion, c.KubeVersion)
		if len(k.APIVersions) > 0 {
			c.ApiVersions = k.APIVersions
		}
	}
	return c
}

func run(fs filesys.FileSystem, dir string, opts *krusty.Options) ([]*unstructured.Unstructured, error) {
	k := krusty.MakeKustomizer(opts)
	resMap, err := k.Run(fs, dir)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, r := range resMap.Resources() {
		// Through JSON, so numbers are int64 or float64 as in objects read
		// from the API server.
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := utiljson.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// edit applies the overrides to a kustomization's text, as the matching
// `kustomize edit` commands would.
func edit(data []byte, root, appDir string, o *v1alpha1.ApplicationSourceKustomize, env map[string]string) ([]byte, error) {
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil, err
	}
	k.FixKustomization()

	if o.NamePrefix != "" {
		k.NamePrefix = o.NamePrefix
	}
	if o.NameSuffix != "" {
		k.NameSuffix = o.NameSuffix
	}
	if o.Namespace != "" {
		k.Namespace = o.Namespace
	}
	for _, img := range o.Images {
		setImage(&k, parseImage(string(img)))
	}
	for _, r := range o.Replicas {
		count, err := replicaCount(r)
		if err != nil {
			return nil, err
		}
		setReplicas(&k, types.Replica{Name: r.Name, Count: count})
	}
	if len(o.CommonLabels) > 0 {
		if err := addLabels(&k, o); err != nil {
			return nil, err
		}
	}
	if len(o.CommonAnnotations) > 0 {
		annotations := o.CommonAnnotations
		if o.CommonAnnotationsEnvsubst {
			annotations = make(map[string]string, len(o.CommonAnnotations))
			for key, v := range o.CommonAnnotations {
				annotations[key] = os.Expand(v, func(name string) string { return env[name] })
			}
		}
		if k.CommonAnnotations == nil {
			k.CommonAnnotations = map[string]string{}
		}
		for key, v := range annotations {
			if _, exists := k.CommonAnnotations[key]; exists && !o.ForceCommonAnnotations {
				return nil, fmt.Errorf("annotation %q already in the kustomization (set forceCommonAnnotations to overwrite)", key)
			}
			k.CommonAnnotations[key] = v
		}
	}
	for _, p := range o.Patches {
		patch := types.Patch{Path: p.Path, Patch: p.Patch}
		if len(p.Options) > 0 {
			patch.Options = &types.PatchArgs{AllowNameChange: p.Options["allowNameChange"], AllowKindChange: p.Options["allowKindChange"]}
		}
		if p.Target != nil {
			patch.Target = &types.Selector{
				ResId:              resIDFor(p.Target.KustomizeResID),
				AnnotationSelector: p.Target.AnnotationSelector,
				LabelSelector:      p.Target.LabelSelector,
			}
		}
		k.Patches = append(k.Patches, patch)
	}
	for _, c := range o.Components {
		if o.IgnoreMissingComponents {
			rel, err := filepath.Rel(root, filepath.Join(appDir, c))
			if err != nil {
				return nil, err
			}
			dir, err := pathsafe.Join(root, rel)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", c, err)
			}
			if _, err := os.Stat(dir); err != nil {
				continue
			}
		}
		k.Components = append(k.Components, c)
	}
	return yaml.Marshal(&k)
}

// addLabels adds commonLabels as `kustomize edit add label` does: to every
// resource and selector, or only to resources (and optionally pod
// templates) with labelWithoutSelector.
func addLabels(k *types.Kustomization, o *v1alpha1.ApplicationSourceKustomize) error {
	if !o.ForceCommonLabels {
		for key := range o.CommonLabels {
			if hasLabel(k, key) {
				return fmt.Errorf("label %q already in the kustomization (set forceCommonLabels to overwrite)", key)
			}
		}
	}
	pairs := map[string]string{}
	for key, v := range o.CommonLabels {
		//lint:ignore SA1019 a forced label replaces the commonLabels entry in place, as `kustomize edit add label --force` does
		if _, ok := k.CommonLabels[key]; ok {
			k.CommonLabels[key] = v //lint:ignore SA1019 see above
			continue
		}
		pairs[key] = v
	}
	if len(pairs) == 0 {
		return nil
	}
	label := types.Label{Pairs: pairs, IncludeSelectors: true}
	if o.LabelWithoutSelector {
		label = types.Label{Pairs: pairs, IncludeTemplates: o.LabelIncludeTemplates}
	}
	k.Labels = append(k.Labels, label)
	return nil
}

// hasLabel reports whether the kustomization already sets a label key,
// through labels or the older commonLabels that most kustomizations still use.
func hasLabel(k *types.Kustomization, key string) bool {
	//lint:ignore SA1019 existing kustomizations use commonLabels; a conflict with them must be caught
	if _, ok := k.CommonLabels[key]; ok {
		return true
	}
	for _, l := range k.Labels {
		if _, ok := l.Pairs[key]; ok {
			return true
		}
	}
	return false
}
