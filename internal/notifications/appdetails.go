package notifications

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo"
)

// AppDetail is what repo.GetAppDetails answers templates, as Argo CD's:
// the source's type and what its tool offers to set.
type AppDetail struct {
	Type      string
	Helm      *HelmAppDetail
	Kustomize *repo.KustomizeAppSpec
	Directory *struct{}
}

// HelmAppDetail is a Helm source: the chart's parameters and the
// Application's own overrides of them.
type HelmAppDetail struct {
	HelmAppSpec            repo.HelmAppSpec
	HelmParameterOverrides []v1alpha1.HelmParameter
}

// GetParameterValueByName is a parameter's value: the Application's
// override, else the chart's ("" when neither has it).
func (h HelmAppDetail) GetParameterValueByName(name string) string {
	for _, p := range h.HelmParameterOverrides {
		if p.Name == name {
			return p.Value
		}
	}
	for _, p := range h.HelmAppSpec.Parameters {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// GetFileParameterPathByName is a file parameter's path ("" when none).
func (h HelmAppDetail) GetFileParameterPathByName(name string) string {
	for _, p := range h.HelmAppSpec.FileParameters {
		if p.Name == name {
			return p.Path
		}
	}
	return ""
}

// appDetails asks the repo server what app's source (its first, with
// several) is and offers.
func appDetails(ctx context.Context, app map[string]any, rr RepoReader) (*AppDetail, error) {
	if rr == nil {
		return nil, errors.New("no repo server to read the application's source through")
	}
	src, err := appSource(app)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := rr.AppDetails(ctx, &repo.AppDetailsRequest{Source: src, Project: appProject(app)})
	if err != nil {
		return nil, fmt.Errorf("reading the application's source: %w", err)
	}
	out := &AppDetail{Type: string(d.Type), Kustomize: d.Kustomize}
	if d.Helm != nil {
		out.Helm = &HelmAppDetail{HelmAppSpec: *d.Helm}
		if src.Helm != nil {
			out.Helm.HelmParameterOverrides = src.Helm.Parameters
		}
	}
	if d.Type == v1alpha1.SourceTypeDirectory {
		out.Directory = &struct{}{}
	}
	return out, nil
}

// appSource is app's source, or its first source.
func appSource(app map[string]any) (v1alpha1.ApplicationSource, error) {
	spec, _ := app["spec"].(map[string]any)
	raw, ok := spec["source"]
	if srcs, many := spec["sources"].([]any); !ok && many && len(srcs) > 0 {
		raw = srcs[0]
	}
	var src v1alpha1.ApplicationSource
	data, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(data, &src)
	}
	if err != nil || src.RepoURL == "" {
		return src, errors.New("the application has no source")
	}
	return src, nil
}

// syncFuncs are the sync group: GetInfoItem(app, name) is the value of
// the info item of that name the sync operation carries ("" when none).
var syncFuncs = map[string]any{
	"GetInfoItem": func(app map[string]any, name string) string {
		for _, op := range []any{app["operation"], nested(app, "status", "operationState", "operation")} {
			m, _ := op.(map[string]any)
			items, _ := m["info"].([]any)
			for _, it := range items {
				item, _ := it.(map[string]any)
				if item["name"] == name {
					v, _ := item["value"].(string)
					return v
				}
			}
		}
		return ""
	},
}

// nested is the value at a path of maps (nil when absent).
func nested(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
