// Package hydrate writes what Argo CD's source hydrator writes to a
// hydrated branch: a dry source's rendered manifests in manifest.yaml under
// the Application's path, beside a hydrator.metadata and a README.md
// telling how they were made, a hydrator.metadata at the root naming the
// dry commit, and the commit message from argocd-cm's
// sourceHydrator.commitMessageTemplate.
package hydrate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/safetext"
)

// DefaultCommitMessageTemplate is the commit message when argocd-cm sets
// no sourceHydrator.commitMessageTemplate: Argo CD's.
const DefaultCommitMessageTemplate = `{{.metadata.drySha | trunc 7}}: {{ .metadata.subject }}
{{- if .metadata.body }}

{{ .metadata.body }}
{{- end }}
{{ range $ref := .metadata.references }}
{{- if and $ref.commit $ref.commit.author }}
Co-authored-by: {{ $ref.commit.author.name }} <{{ $ref.commit.author.email }}>
{{- end }}
{{- end }}
{{- if .metadata.author }}
Co-authored-by: {{ .metadata.author }}
{{- end }}
`

// Metadata is a hydrator.metadata file, as Argo CD writes it; templates
// see it as .metadata.
type Metadata struct {
	RepoURL  string   `json:"repoURL,omitempty"`
	DrySHA   string   `json:"drySha,omitempty"`
	Commands []string `json:"commands,omitempty"`
	Author   string   `json:"author,omitempty"`
	Date     string   `json:"date,omitempty"`
	Subject  string   `json:"subject,omitempty"`
	Body     string   `json:"body,omitempty"`
	// References are the commits the dry commit's trailers name.
	References []Reference `json:"references,omitempty"`
}

// DryCommit is what the dry commit says of itself.
type DryCommit struct {
	Author  string
	Date    time.Time
	Message string
}

// Commit is one hydration of a dry commit into a path of a branch.
type Commit struct {
	RepoURL, DrySHA string
	// Dry is the dry commit's metadata; nil leaves it out.
	Dry *DryCommit
	// Path is the directory the manifests go to, relative to the branch's
	// root, and never the root itself.
	Path string
	// Objects are the dry source's manifests, in order.
	Objects []*unstructured.Unstructured
	// ReadmeTemplate is the README.md's template (argocd-cm's
	// sourceHydrator.readmeMessageTemplate: .RepoURL, .DrySHA, .Commands);
	// empty means Argo CD's.
	ReadmeTemplate string
}

// Metadata is the root hydrator.metadata: the dry commit and its message.
func (c *Commit) Metadata() Metadata {
	m := Metadata{RepoURL: c.RepoURL, DrySHA: c.DrySHA}
	if c.Dry != nil {
		m.Author = c.Dry.Author
		if !c.Dry.Date.IsZero() {
			m.Date = c.Dry.Date.Format(time.RFC3339)
		}
		subject, body, _ := strings.Cut(strings.TrimSpace(c.Dry.Message), "\n")
		ref, rest := splitReferences(strings.TrimSpace(body))
		m.Subject, m.Body = strings.TrimSpace(subject), rest
		if ref != nil {
			m.References = []Reference{{Commit: ref}}
		}
	}
	return m
}

// Files are the files to write, by path relative to the branch's root.
func (c *Commit) Files() (map[string][]byte, error) {
	if err := checkPath(c.Path); err != nil {
		return nil, err
	}
	var manifests bytes.Buffer
	for i, obj := range c.Objects {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("manifest %d: %w", i+1, err)
		}
		manifests.WriteString("---\n")
		manifests.Write(data)
	}
	root, err := jsonFile(c.Metadata())
	if err != nil {
		return nil, err
	}
	pathMeta := Metadata{RepoURL: c.RepoURL, DrySHA: c.DrySHA}
	local, err := jsonFile(pathMeta)
	if err != nil {
		return nil, err
	}
	readme, err := render(cmp.Or(c.ReadmeTemplate, readmeTemplate), pathMeta)
	if err != nil {
		return nil, fmt.Errorf("sourceHydrator.readmeMessageTemplate: %w", err)
	}
	dir := filepath.Clean(c.Path)
	return map[string][]byte{
		"hydrator.metadata":                     root,
		".gitattributes":                        []byte(gitAttributes),
		filepath.Join(dir, "manifest.yaml"):     manifests.Bytes(),
		filepath.Join(dir, "hydrator.metadata"): local,
		filepath.Join(dir, "README.md"):         []byte(readme),
	}, nil
}

// Edit empties the path in the work tree at root (the hydration's files
// only: the rest of the branch stays) and writes Files, through a
// pathsafe.Tree: a link the hydrated branch holds never leads a write
// elsewhere.
func (c *Commit) Edit(root string) error {
	files, err := c.Files()
	if err != nil {
		return err
	}
	tree, err := pathsafe.OpenTree(root)
	if err != nil {
		return err
	}
	defer tree.Close()
	if err := tree.RemoveAll(c.Path); err != nil {
		return fmt.Errorf("syncSource.path %q: %w", c.Path, err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := tree.WriteFile(name, files[name], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// Message is the commit message: tmpl (default
// DefaultCommitMessageTemplate) executed on the root metadata.
func (c *Commit) Message(tmpl string) (string, error) {
	if tmpl == "" {
		tmpl = DefaultCommitMessageTemplate
	}
	var data map[string]any
	raw, err := json.Marshal(c.Metadata())
	if err == nil {
		err = json.Unmarshal(raw, &data)
	}
	if err != nil {
		return "", err
	}
	msg, err := render(tmpl, map[string]any{"metadata": data})
	if err != nil {
		return "", fmt.Errorf("sourceHydrator.commitMessageTemplate: %w", err)
	}
	return msg, nil
}

// checkPath refuses the root, paths out of the branch and paths into its
// .git directory: hydration empties its path first.
func checkPath(p string) error {
	clean := filepath.Clean(p)
	if clean == "." || clean == "/" || p == "" {
		return fmt.Errorf("syncSource.path %q: hydrating to the repository's root is not supported; name a directory", p)
	}
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("syncSource.path %q is outside the repository", p)
	}
	for _, elem := range strings.Split(filepath.ToSlash(clean), "/") {
		if strings.EqualFold(elem, ".git") {
			return fmt.Errorf("syncSource.path %q is inside the repository's .git directory", p)
		}
	}
	return nil
}

func jsonFile(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

const gitAttributes = "**/README.md linguist-generated=true\n**/hydrator.metadata linguist-generated=true\n"

// readmeTemplate is the README.md of a hydrated path.
var readmeTemplate = "# Manifest Hydration\n\nTo hydrate the manifests in this repository, run the following commands:\n\n" +
	"```shell\ngit clone {{ .RepoURL }}\n# cd into the cloned directory\ngit checkout {{ .DrySHA }}\n{{ range $command := .Commands -}}\n{{ $command }}\n{{ end -}}```\n"

// maxMessage bounds a templated commit message.
const maxMessage = 64 << 10

func render(tmpl string, data any) (string, error) {
	t, err := safetext.Parse("hydrator", tmpl, nil, "missingkey=zero")
	if err != nil {
		return "", err
	}
	return t.Execute(data, maxMessage, "the hydrator's message")
}
