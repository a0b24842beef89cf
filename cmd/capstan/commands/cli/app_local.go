package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/repo"
)

// targetFlags pick what an Application is compared with or rendered as,
// instead of its sources now: other revisions (by source position or
// name), or a local directory rendered here as the repo server would.
type targetFlags struct {
	revision, local, localRepoRoot string
	revisions, sourceNames         []string
	sourcePositions                []int64
	// serverSideGenerate sends --local's files (those localIncludes names)
	// to the server to render, as app diff --server-side-generate does.
	serverSideGenerate bool
	localIncludes      []string
}

func (t *targetFlags) add(fs *pflag.FlagSet, revisionUsage string) {
	fs.StringVar(&t.revision, "revision", "", revisionUsage)
	fs.StringArrayVar(&t.revisions, "revisions", nil, "revisions of several sources, each with a --source-positions or --source-names entry")
	fs.Int64SliceVar(&t.sourcePositions, "source-positions", nil, "positions (from 1) of the sources --revisions are for")
	fs.StringArrayVar(&t.sourceNames, "source-names", nil, "names of the sources --revisions are for")
	fs.StringVar(&t.local, "local", "", "render this local directory (the source's path) instead of the repository")
	fs.StringVar(&t.localRepoRoot, "local-repo-root", "/", "the local repository's root, which --local lies in")
}

// given reports whether the flags ask for other targets than the sources.
func (t *targetFlags) given() bool { return t.local != "" || t.revision != "" || len(t.revisions) > 0 }

// manifests returns the manifests the flags ask for, as JSON documents.
func (t *targetFlags) manifests(ctx context.Context, c *apiclient.Client, name string) ([]string, error) {
	if t.local != "" && t.serverSideGenerate {
		return serverManifests(ctx, c, name, t.local, t.localIncludes)
	}
	if t.local != "" {
		return localManifests(ctx, c, name, t.local, t.localRepoRoot)
	}
	q := url.Values{"revision": {t.revision}, "revisions": t.revisions, "sourceNames": t.sourceNames}
	for _, p := range t.sourcePositions {
		q.Add("sourcePositions", strconv.FormatInt(p, 10))
	}
	var resp struct{ Manifests []string }
	if err := c.Do(ctx, "GET", appPath(name, "/manifests").With(q), nil, &resp); err != nil {
		return nil, fmt.Errorf("rendering application %s: %w", name, err)
	}
	return resp.Manifests, nil
}

// localManifests renders the Application's source from the local
// directory dir inside repoRoot, as JSON documents.
func localManifests(ctx context.Context, c *apiclient.Client, name, dir, repoRoot string) ([]string, error) {
	app, err := getApp(ctx, c, name)
	if err != nil {
		return nil, err
	}
	objs, err := renderLocal(ctx, app, dir, repoRoot)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		data, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		out = append(out, string(data))
	}
	return out, nil
}

// renderLocal renders the Application's source from a local directory,
// with the repo server's own code: dir is the source's directory inside
// repoRoot. A multi-source Application's first source that is not only a
// $ref is the one rendered.
func renderLocal(ctx context.Context, app *v1alpha1.Application, dir, repoRoot string) ([]*unstructured.Unstructured, error) {
	sources := app.Spec.GetSources()
	i := slices.IndexFunc(sources, func(s v1alpha1.ApplicationSource) bool { return s.Path != "" || s.Chart != "" || s.Ref == "" })
	if i < 0 {
		return nil, fmt.Errorf("application %s has no source to render", app.Name)
	}
	src := sources[i]
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("--local %s is not inside --local-repo-root %s", dir, repoRoot)
	}
	src.Path, src.Chart = rel, ""
	cache, err := os.MkdirTemp("", "capstan-local-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	svc := repo.NewService(repo.Options{Root: cache})
	resp, err := svc.RenderLocal(ctx, root, src, repo.RequestFor(app))
	if err != nil {
		return nil, fmt.Errorf("rendering %s locally: %w", dir, err)
	}
	return resp.Objects, nil
}
