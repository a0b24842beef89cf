package v1alpha1

import (
	"path"
	"strings"
)

// ManifestGeneratePaths are the repository paths (relative to its root,
// cleaned, "." for the root) its manifest-generate-paths annotation names
// for the source, or nil when the Application has no such annotation.
func (a *Application) ManifestGeneratePaths(src ApplicationSource) []string {
	value, ok := a.Annotations[AnnotationManifestGeneratePaths]
	if !ok {
		return nil
	}
	var out []string
	for _, p := range strings.Split(value, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if strings.HasPrefix(p, "/") {
			p = path.Clean(p[1:])
		} else {
			p = path.Join(src.Path, p)
		}
		out = append(out, strings.TrimPrefix(path.Clean("/"+p), "/"))
	}
	for i := range out {
		if out[i] == "" {
			out[i] = "."
		}
	}
	return out
}

// PathsChanged reports whether a change of files (repository paths, as a
// push lists them) touches one of paths: the path itself, a file under
// it, or a file its glob matches. With no paths (no annotation) or no files
// (the push did not list them), it reports true, as Argo CD refreshes then.
func PathsChanged(paths, files []string) bool {
	if len(paths) == 0 || len(files) == 0 {
		return true
	}
	for _, f := range files {
		f = strings.TrimPrefix(path.Clean("/"+f), "/")
		for _, p := range paths {
			if p == "." || f == p || strings.HasPrefix(f, p+"/") {
				return true
			}
			if ok, _ := path.Match(p, f); ok {
				return true
			}
		}
	}
	return false
}
