package applicationset

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo"
)

// git yields one parameter set per matching directory, or per object in
// each matching JSON/YAML file, of a revision: a Git commit's, or an OCI
// artifact's for the generator kind "oci".
func (g *generation) git(gen *v1alpha1.GitGenerator, kind string) ([]Params, error) {
	if g.src.Git == nil {
		return nil, fmt.Errorf("the %s generator needs a repo server", kind)
	}
	var params []Params
	var err error
	switch {
	case len(gen.Directories) > 0:
		params, err = g.gitDirectories(gen)
	case len(gen.Files) > 0:
		params, err = g.gitFiles(gen)
	default:
		return nil, fmt.Errorf("the %s generator for %s lists neither directories nor files", kind, gen.RepoURL)
	}
	if err != nil {
		return nil, err
	}
	for i, p := range params {
		if params[i], err = g.withValues(p, gen.Values); err != nil {
			return nil, err
		}
	}
	return params, nil
}

func (g *generation) gitDirectories(gen *v1alpha1.GitGenerator) ([]Params, error) {
	resp, err := g.src.Git.GitDirectories(g.ctx, &repo.GitDirectoriesRequest{RepoURL: gen.RepoURL, Revision: gen.Revision, Project: g.project()})
	if err != nil {
		return nil, fmt.Errorf("listing directories of %s at %s: %w", gen.RepoURL, gen.Revision, err)
	}
	var out []Params
	for _, dir := range resp.Paths {
		ok, err := dirSelected(dir, gen.Directories)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, g.pathParams(Params{}, gen.PathParamPrefix, dir, ""))
		}
	}
	return out, nil
}

// dirSelected reports whether dir matches an included pattern and no
// excluded one (path.Match: "*" stays within one directory).
func dirSelected(dir string, items []v1alpha1.GitDirectoryGeneratorItem) (bool, error) {
	included := false
	for _, it := range items {
		ok, err := path.Match(it.Path, dir)
		if err != nil {
			return false, fmt.Errorf("directory pattern %q: %w", it.Path, err)
		}
		if ok && it.Exclude {
			return false, nil
		}
		included = included || ok
	}
	return included, nil
}

func (g *generation) gitFiles(gen *v1alpha1.GitGenerator) ([]Params, error) {
	req := &repo.GitFilesRequest{RepoURL: gen.RepoURL, Revision: gen.Revision, Project: g.project(), PathAware: g.src.PathAwareGlobs}
	for _, it := range gen.Files {
		if it.Exclude {
			req.Exclude = append(req.Exclude, it.Path)
		} else {
			req.Patterns = append(req.Patterns, it.Path)
		}
	}
	resp, err := g.src.Git.GitFiles(g.ctx, req)
	if err != nil {
		return nil, fmt.Errorf("reading files of %s at %s: %w", gen.RepoURL, gen.Revision, err)
	}
	var out []Params
	for _, name := range slices.Sorted(maps.Keys(resp.Files)) {
		objs, err := fileObjects(resp.Files[name])
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", name, gen.RepoURL, err)
		}
		for _, obj := range objs {
			out = append(out, g.pathParams(g.element(obj), gen.PathParamPrefix, path.Dir(name), name))
		}
	}
	return out, nil
}

// fileObjects reads a JSON or YAML file holding an object or a list of them.
func fileObjects(data []byte) ([]map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("not JSON or YAML: %w", err)
	}
	switch v := v.(type) {
	case map[string]any:
		return []map[string]any{v}, nil
	case []any:
		out := make([]map[string]any, 0, len(v))
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("item %d of the list is not an object", i)
			}
			out = append(out, m)
		}
		return out, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("holds neither an object nor a list of objects")
}

// pathParams adds Argo CD's path parameters for a directory (and the file
// in it, when file is set) to p, under prefix when one is given.
func (g *generation) pathParams(p Params, prefix, dir, file string) Params {
	segments := strings.Split(dir, "/")
	if g.r.goTemplate {
		info := map[string]any{
			"path": dir, "basename": path.Base(dir), "basenameNormalized": normalize(path.Base(dir)),
			"segments": toAnyList(segments),
		}
		if file != "" {
			info["filename"], info["filenameNormalized"] = path.Base(file), normalize(path.Base(file))
		}
		if prefix == "" {
			p["path"] = info
		} else {
			p[prefix] = deepMerge(p[prefix], map[string]any{"path": info})
		}
		return p
	}
	key := join(prefix, "path")
	p[key], p[key+".basename"], p[key+".basenameNormalized"] = dir, path.Base(dir), normalize(path.Base(dir))
	if file != "" {
		p[key+".filename"], p[key+".filenameNormalized"] = path.Base(file), normalize(path.Base(file))
	}
	for i, s := range segments {
		p[key+"["+strconv.Itoa(i)+"]"] = s
	}
	return p
}

func toAnyList(s []string) []any {
	out := make([]any, len(s))
	for i, e := range s {
		out[i] = e
	}
	return out
}

// project is the project whose repository credentials the Git generator
// uses: the template's, unless it is itself templated (then only
// credentials of no project), as Argo CD's generator picks it.
func (g *generation) project() string {
	p := g.appset.Spec.Template.Spec.Project
	if strings.Contains(p, "{{") {
		return ""
	}
	return p
}
