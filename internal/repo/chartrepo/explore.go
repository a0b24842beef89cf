package chartrepo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/capstan-cd/capstan/internal/repo/git"
)

// Chart is one chart of a repository's index with its versions, newest
// first.
type Chart struct {
	Name     string   `json:"name"`
	Versions []string `json:"versions"`
}

// Charts lists the charts of an HTTP chart repository's index, by name.
// An OCI registry has no index to list.
func (c *Client) Charts(ctx context.Context, repoURL string, creds git.Creds) ([]Chart, error) {
	if IsOCI(repoURL) {
		return nil, errors.New("an OCI registry has no chart index; name the chart")
	}
	if err := Validate(repoURL, "x"); err != nil {
		return nil, err
	}
	index, err := c.index(ctx, repoURL, creds, true)
	if err != nil {
		return nil, err
	}
	out := make([]Chart, 0, len(index.Entries))
	for name, versions := range index.Entries {
		ch := Chart{Name: name, Versions: make([]string, 0, len(versions))}
		for _, v := range versions {
			ch.Versions = append(ch.Versions, v.Version)
		}
		out = append(out, ch)
	}
	slices.SortFunc(out, func(a, b Chart) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out, nil
}

// Tags lists the versions an OCI registry holds of chart.
func (c *Client) Tags(ctx context.Context, repoURL, chart string, creds git.Creds) ([]string, error) {
	if !IsOCI(repoURL) {
		return nil, fmt.Errorf("%s is not an OCI registry", git.RedactURL(repoURL))
	}
	if err := Validate(repoURL, chart); err != nil {
		return nil, err
	}
	return c.ociTags(ctx, repoURL, chart, creds, true)
}

// Details is what a chart's Chart.yaml says of it.
type Details struct {
	Description string `json:"description,omitempty"`
	Home        string `json:"home,omitempty"`
	// Maintainers are "Name <email>", or the name alone.
	Maintainers []string `json:"maintainers,omitempty"`
}

// ChartDetails reads Chart.yaml of a chart version (a constraint is
// resolved to the newest version it allows).
func (c *Client) ChartDetails(ctx context.Context, repoURL, chart, version string, creds git.Creds) (*Details, error) {
	exact, err := c.Resolve(ctx, repoURL, chart, version, creds, false)
	if err != nil {
		return nil, err
	}
	dir, err := c.Fetch(ctx, repoURL, chart, exact, creds)
	if err != nil {
		return nil, err
	}
	meta, err := chartutil.LoadChartfile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading Chart.yaml of %s %s: %w", chart, exact, err)
	}
	d := &Details{Description: meta.Description, Home: meta.Home}
	for _, m := range meta.Maintainers {
		if m == nil {
			continue
		}
		if m.Email != "" {
			d.Maintainers = append(d.Maintainers, m.Name+" <"+m.Email+">")
		} else {
			d.Maintainers = append(d.Maintainers, m.Name)
		}
	}
	return d, nil
}
