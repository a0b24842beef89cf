package applicationset

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset/plugin"
	"github.com/capstan-cd/capstan/internal/settings"
)

// DefaultPluginRequeueAfter is how often the plugin generator asks its
// service again, as in Argo CD.
const DefaultPluginRequeueAfter = 30 * time.Minute

// pluginGenerator yields the parameter sets the plugin's service answers,
// each with the generator's input under generator.input.parameters.
func (g *generation) pluginGenerator(gen *v1alpha1.PluginGenerator) ([]Params, error) {
	seconds := gen.RequeueAfterSeconds
	if seconds == nil {
		d := int64(DefaultPluginRequeueAfter / time.Second)
		seconds = &d
	}
	g.wantRequeue(seconds)
	c, err := g.pluginClient(gen.ConfigMapRef.Name)
	if err != nil {
		return nil, err
	}
	input, err := pluginInput(gen.Input.Parameters)
	if err != nil {
		return nil, err
	}
	sets, err := c.Params(g.ctx, g.appset.Name, input)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", gen.ConfigMapRef.Name, err)
	}
	var out []Params
	for _, set := range sets {
		p := Params{}
		if g.r.goTemplate {
			for k, v := range set {
				p[k] = v
			}
		} else {
			for k, v := range Params(set).flatten() {
				p[k] = v
			}
		}
		p["generator"] = map[string]any{"input": map[string]any{"parameters": input}}
		if p, err = g.withValues(p, gen.Values); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// pluginInput decodes the generator's input parameters.
func pluginInput(raw map[string]apiextensionsv1.JSON) (map[string]any, error) {
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		var val any
		if err := json.Unmarshal(v.Raw, &val); err != nil {
			return nil, fmt.Errorf("plugin input.parameters.%s: %w", k, err)
		}
		out[k] = val
	}
	return out, nil
}

// pluginClient reads the plugin's ConfigMap in the control namespace:
// baseUrl, token (a "$<secret>:<key>" or "$<key>" reference into
// argocd-secret) and requestTimeout in seconds.
func (g *generation) pluginClient(name string) (plugin.Client, error) {
	field := "plugin.configMapRef"
	if g.src.Reader == nil {
		return plugin.Client{}, fmt.Errorf("%s: no client to read ConfigMaps", field)
	}
	var cm corev1.ConfigMap
	if err := g.src.Reader.Get(g.ctx, client.ObjectKey{Namespace: g.src.Namespace, Name: name}, &cm); err != nil {
		return plugin.Client{}, fmt.Errorf("%s: ConfigMap %s/%s: %w", field, g.src.Namespace, name, err)
	}
	c := plugin.Client{BaseURL: cm.Data["baseUrl"]}
	if c.BaseURL == "" {
		return plugin.Client{}, fmt.Errorf("%s: ConfigMap %s/%s has no baseUrl", field, g.src.Namespace, name)
	}
	if s := cm.Data["requestTimeout"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return plugin.Client{}, fmt.Errorf("%s: ConfigMap %s/%s: requestTimeout %q is not a number of seconds", field, g.src.Namespace, name, s)
		}
		c.Timeout = time.Duration(n) * time.Second
	}
	token, err := g.pluginToken(cm.Data["token"])
	if err != nil {
		return plugin.Client{}, fmt.Errorf("%s: ConfigMap %s/%s: %w", field, g.src.Namespace, name, err)
	}
	c.Token = token
	return c, nil
}

// pluginToken resolves a plugin's token reference: "$name:key" reads key
// of Secret name, "$key" reads argocd-secret, both in the control
// namespace. The value itself is never put in an error.
func (g *generation) pluginToken(ref string) (string, error) {
	if !strings.HasPrefix(ref, "$") {
		return "", errors.New(`token must reference a Secret key as "$<secret>:<key>" or "$<key>"`)
	}
	secret, key := settings.ServerSecretName, ref[1:]
	if name, k, ok := strings.Cut(ref[1:], ":"); ok {
		secret, key = name, k
	}
	v, err := g.secretKey(g.src.Namespace, secret, key)
	if err == nil && v == "" {
		err = fmt.Errorf("key %q of Secret %s/%s is empty", key, g.src.Namespace, secret)
	}
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return v, nil
}
