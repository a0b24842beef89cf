package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// environ is the environment a plugin's commands get for src, as Argo CD
// builds it: the build variables; each plugin.env entry as ARGOCD_ENV_<name>,
// its value expanded against the build variables ($$ for a literal $); and
// the parameters, all of them as the ARGOCD_APP_PARAMETERS JSON and each as
// PARAM_<NAME> (an array's items PARAM_<NAME>_<i>, a map's PARAM_<NAME>_<KEY>),
// names upper-cased with any character but letters, digits and _ made _.
func environ(src *Source) ([]string, error) {
	out := make([]string, 0, len(src.Env))
	for k, v := range src.Env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	if src.Plugin == nil {
		return out, nil
	}
	for _, e := range src.Plugin.Env {
		if e == nil || e.Name == "" {
			continue
		}
		out = append(out, "ARGOCD_ENV_"+e.Name+"="+expand(e.Value, src.Env))
	}
	if len(src.Plugin.Parameters) == 0 {
		return out, nil
	}
	all, err := json.Marshal(src.Plugin.Parameters)
	if err != nil {
		return nil, fmt.Errorf("plugin parameters: %w", err)
	}
	out = append(out, "ARGOCD_APP_PARAMETERS="+string(all))
	for _, p := range src.Plugin.Parameters {
		base := "PARAM_" + paramName(p.Name)
		if p.String_ != nil {
			out = append(out, base+"="+*p.String_)
		}
		keys := make([]string, 0, len(p.Map))
		for k := range p.Map {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, base+"_"+paramName(k)+"="+p.Map[k])
		}
		for i, v := range p.Array {
			out = append(out, fmt.Sprintf("%s_%d=%s", base, i, v))
		}
	}
	return out, nil
}

func expand(s string, env map[string]string) string {
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return env[name]
	})
}

var notParamChar = regexp.MustCompile(`[^A-Z0-9_]`)

func paramName(name string) string {
	return notParamChar.ReplaceAllString(strings.ToUpper(name), "_")
}
