package writeback

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
	"github.com/capstan-cd/capstan/internal/safetext"
)

// DefaultCommitMessage is Argo CD Image Updater's commit message.
const DefaultCommitMessage = `build: automatic update of {{ .AppName }}

{{ range .AppChanges -}}
updates image {{ .Image }} tag '{{ .OldTag }}' to '{{ .NewTag }}'
{{ end -}}
`

// messageData is what commit message and branch templates see: the
// image updater's .AppName, .AppChanges (Image, OldTag, NewTag), .Images
// (Name, Alias, OldTag, NewTag) and .SHA256 of the changes, and the
// lower-case shorthands .app, .image and .tag for a single change.
func messageData(app string, changes []Change) map[string]any {
	type appChange struct{ Image, OldTag, NewTag string }
	type image struct{ Name, Alias, OldTag, NewTag string }
	list := make([]appChange, len(changes))
	images := make([]image, len(changes))
	sum := sha256.New()
	for i, c := range changes {
		list[i] = appChange{Image: c.Name, OldTag: c.OldTag, NewTag: c.NewTag}
		images[i] = image{Name: c.Name, Alias: c.Image.Alias, OldTag: c.OldTag, NewTag: c.NewTag}
		fmt.Fprintf(sum, "%s:%s\n", c.Name, c.NewTag)
	}
	data := map[string]any{"AppName": app, "AppChanges": list, "Images": images, "SHA256": hex.EncodeToString(sum.Sum(nil)), "app": app}
	if len(changes) > 0 {
		data["image"], data["tag"] = changes[0].Name, changes[0].NewTag
	}
	return data
}

// maxMessage bounds a rendered commit message or branch (and, as
// safetext's budget, 16 times that of what its functions build).
const maxMessage = 64 << 10

// Render expands a commit message or branch template for an
// Application's changes, through the bounded template helper (with
// Sprig's safe functions, as Argo CD Image Updater's templates have).
func Render(text, app string, changes []Change) (string, error) {
	tmpl, err := safetext.Parse("message", text, nil, "missingkey=zero")
	if err != nil {
		return "", fmt.Errorf("template %q: %w", safetext.Truncate(text, 256), err)
	}
	out, err := tmpl.Execute(messageData(app, changes), maxMessage, "the commit message")
	if err != nil {
		return "", fmt.Errorf("template %q: %w", safetext.Truncate(text, 256), err)
	}
	return out, nil
}

// Branch renders the target of git-branch base:target. An empty result
// is an error (it would push to base), and a long one is cut to 255
// characters, as Argo CD Image Updater does.
func Branch(text, app string, changes []Change) (string, error) {
	branch, err := Render(text, app, changes)
	if err != nil {
		return "", err
	}
	branch = strings.TrimSpace(branch)
	if branch == "" {
		return "", fmt.Errorf("branch template %q renders an empty branch name", text)
	}
	if len(branch) > 255 {
		branch = branch[:255]
	}
	return branch, nil
}

// GitEdit returns the edit a Git write-back makes in a checkout of the
// Application's repository: the write-back target edited in place, or
// .argocd-source-<app>.yaml or the override file the target names
// (Kustomize, Helm and plugin sources), or the manifests' image fields
// (plain directories). Every read and write goes through a
// pathsafe.Tree: no link the repository holds leads one elsewhere.
func GitEdit(app *v1alpha1.Application, wb config.WriteBack, changes []Change) func(root string) error {
	return func(root string) error {
		src, typ := MainSource(app, wb)
		if src == nil {
			return errors.New("git write-back needs an Application with a source")
		}
		if _, err := pathsafe.Join(root, src.Path); err != nil {
			return fmt.Errorf("source path %q: %w", src.Path, err)
		}
		tree, err := pathsafe.OpenTree(root)
		if err != nil {
			return err
		}
		defer tree.Close()
		switch wb.Target {
		case config.TargetHelmValues:
			return editFile(tree, targetPath(src.Path, wb.TargetPath, "values.yaml"), func(data []byte) ([]byte, error) {
				var values [][2]string
				for _, c := range changes {
					values = append(values, HelmValues(c)...)
				}
				return SetValues(data, values)
			})
		case config.TargetKustomization:
			name, err := kustomizationFile(tree, targetPath(src.Path, wb.TargetPath, "."))
			if err != nil {
				return err
			}
			return editFile(tree, name, func(data []byte) ([]byte, error) {
				for _, c := range changes {
					if data, err = SetKustomizationImage(data, c); err != nil {
						return nil, err
					}
				}
				return data, nil
			})
		}
		switch typ {
		case v1alpha1.SourceTypeKustomize, v1alpha1.SourceTypeHelm, v1alpha1.SourceTypePlugin:
			return writeOverrideFile(tree, targetPath(src.Path, wb.TargetPath, ".argocd-source-"+app.Name+".yaml"), src, typ, changes)
		case v1alpha1.SourceTypeDirectory:
			return editManifests(tree, root, src, changes)
		default:
			return fmt.Errorf("git write-back does not support %s sources", typ)
		}
	}
}

// maxEdited bounds a file the write-back reads to edit.
const maxEdited = 16 << 20

// targetPath is a write-back target's file: relative to the source path,
// or to the repository's root when it starts with a slash.
func targetPath(srcPath, target, def string) string {
	if target == "" {
		target = def
	}
	if rooted, ok := strings.CutPrefix(target, "/"); ok {
		return rooted
	}
	return filepath.Join(srcPath, target)
}

// editFile rewrites a file of the checkout (never one outside it).
func editFile(tree *pathsafe.Tree, name string, change func([]byte) ([]byte, error)) error {
	data, err := tree.ReadFile(name, maxEdited)
	if err != nil {
		return fmt.Errorf("write-back target %q: %w", name, err)
	}
	out, err := change(data)
	if err != nil {
		return fmt.Errorf("write-back target %q: %w", name, err)
	}
	if err := tree.WriteFile(name, out, 0o644); err != nil {
		return fmt.Errorf("write-back target %q: %w", name, err)
	}
	return nil
}

// kustomizationFile finds the kustomization a kustomization target names:
// the file itself, or the kustomization.yaml (.yml, Kustomization) of a
// directory.
func kustomizationFile(tree *pathsafe.Tree, target string) (string, error) {
	info, err := tree.Stat(target)
	if err != nil {
		return "", fmt.Errorf("write-back target %q: %w", target, err)
	}
	if !info.IsDir() {
		return target, nil
	}
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := tree.Stat(filepath.Join(target, name)); err == nil {
			return filepath.Join(target, name), nil
		}
	}
	return "", fmt.Errorf("write-back target %q holds no kustomization", target)
}

// writeOverrideFile records the changes in .argocd-source-<app>.yaml
// (name, inside the checkout), keeping what the file already says about
// other images and settings. A plugin's variables start from the
// Application's own (base) when the file has none, since the file's list
// replaces the Application's whole.
func writeOverrideFile(tree *pathsafe.Tree, name string, base *v1alpha1.ApplicationSource, typ v1alpha1.ApplicationSourceType, changes []Change) error {
	doc := map[string]any{}
	var src v1alpha1.ApplicationSource
	data, err := tree.ReadFile(name, maxEdited)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	default:
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		if err := yaml.Unmarshal(data, &src); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
	}
	if doc == nil { // an empty file, or null
		doc = map[string]any{}
	}
	if typ == v1alpha1.SourceTypePlugin && src.Plugin == nil && base.Plugin != nil {
		src.Plugin = &v1alpha1.ApplicationSourcePlugin{Env: base.Plugin.Env}
	}
	SetOverrides(&src, typ, changes)
	// Only the section written changes; the file's other settings stay.
	switch typ {
	case v1alpha1.SourceTypeKustomize:
		doc["kustomize"] = src.Kustomize
	case v1alpha1.SourceTypePlugin:
		doc["plugin"] = src.Plugin
	default:
		doc["helm"] = src.Helm
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	if err := tree.WriteFile(name, out, 0o644); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// editManifests rewrites the image fields of the YAML manifests a
// directory source renders (its recurse, include and exclude settings
// apply) that use the changed images.
func editManifests(tree *pathsafe.Tree, root string, src *v1alpha1.ApplicationSource, changes []Change) error {
	files, err := directory.Files(context.Background(), root, src.Path, src.Directory, directory.Walk{})
	if err != nil {
		return err
	}
	realRoot, err := pathsafe.Root(root)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, f := range files {
		if ext := strings.ToLower(filepath.Ext(f.Path)); ext != ".yaml" && ext != ".yml" {
			continue // JSON and Jsonnet are not edited
		}
		name, err := filepath.Rel(realRoot, f.Path)
		if err != nil {
			return err
		}
		data, err := tree.ReadFile(name, maxEdited)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Rel, err)
		}
		out := data
		for _, c := range changes {
			var found bool
			if out, found, err = SetManifestImages(out, c); err != nil {
				return fmt.Errorf("%s: %w", f.Rel, err)
			}
			used[c.Name] = used[c.Name] || found
		}
		if !bytes.Equal(out, data) {
			if err := tree.WriteFile(name, out, 0o644); err != nil {
				return fmt.Errorf("%s: %w", f.Rel, err)
			}
		}
	}
	for _, c := range changes {
		if !used[c.Name] {
			return fmt.Errorf("no manifest under the source path uses image %s", c.Name)
		}
	}
	return nil
}
