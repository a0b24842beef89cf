package notifications

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/safetext"
)

// maxField bounds one rendered field of a template.
const maxField = 1 << 20

// Template is template.<name>: a message and service-specific parts
// (email, webhook.<name>, slack, …), every string of which is a Go
// template over the variables.
type Template struct {
	Name string
	// raw is the template as written; fields holds a parsed text/template
	// for each string in it, by its path.
	raw    map[string]any
	fields map[string]*safetext.Template
}

// Notification is a rendered template: what Capstan's own services send
// (the notifications-engine's services get the engine's rendering).
type Notification struct {
	Message string                         `json:"message,omitempty"`
	Email   *EmailNotification             `json:"email,omitempty"`
	Webhook map[string]WebhookNotification `json:"webhook,omitempty"`
}

// EmailNotification is a template's email part.
type EmailNotification struct {
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
}

// WebhookNotification is a template's part for the webhook service of one
// name: the request made to it.
type WebhookNotification struct {
	// Method defaults to GET.
	Method string `json:"method,omitempty"`
	// Path is appended to the service's url.
	Path string `json:"path,omitempty"`
	Body string `json:"body,omitempty"`
}

func parseTemplate(name, v string) (*Template, error) {
	t := &Template{Name: name, raw: map[string]any{}, fields: map[string]*safetext.Template{}}
	if err := yaml.Unmarshal([]byte(v), &t.raw); err != nil {
		return nil, err
	}
	var err error
	walkStrings(t.raw, "", func(path, s string) string {
		if err != nil {
			return s
		}
		tt, perr := safetext.Parse(name+path, s, nil)
		if perr != nil {
			err = fmt.Errorf("%s: %w", path, perr)
		}
		t.fields[path] = tt
		return s
	})
	return t, err
}

// walkStrings calls fn with each string of v and its path
// (".email.subject", ".slack.blocks"), replacing the string with fn's
// answer; maps are walked in key order.
func walkStrings(v any, path string, fn func(path, s string) string) any {
	switch v := v.(type) {
	case string:
		return fn(path, v)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			v[k] = walkStrings(v[k], path+"."+k, fn)
		}
	case []any:
		for i := range v {
			v[i] = walkStrings(v[i], fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
	return v
}

// render renders every field of t over vars into out, a map of what is
// rendered so far: a later template's parts replace an earlier one's.
func (t *Template) render(vars map[string]any, out map[string]any) error {
	doc := deepCopy(t.raw).(map[string]any)
	var err error
	walkStrings(doc, "", func(path, s string) string {
		if err != nil {
			return s
		}
		r, rerr := t.fields[path].Execute(vars, maxField, "template "+t.Name+path)
		if rerr != nil {
			err = fmt.Errorf("template %s%s: %w", t.Name, path, rerr)
		}
		return r
	})
	if err != nil {
		return err
	}
	mergeInto(out, doc)
	return nil
}

// mergeInto merges src into dst: maps key by key, anything else replaced.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		sm, ok1 := v.(map[string]any)
		dm, ok2 := dst[k].(map[string]any)
		if ok1 && ok2 {
			mergeInto(dm, sm)
			continue
		}
		dst[k] = v
	}
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// Format renders the named templates over vars into one notification, as
// Argo CD merges the templates a condition sends.
func (cfg *Config) Format(names []string, vars map[string]any) (Notification, error) {
	doc := map[string]any{}
	for _, name := range names {
		t, ok := cfg.Templates[name]
		if !ok {
			return Notification{}, fmt.Errorf("template '%s' is not supported", name)
		}
		if err := t.render(vars, doc); err != nil {
			return Notification{}, err
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return Notification{}, err
	}
	var n Notification
	if err := json.Unmarshal(data, &n); err != nil {
		return Notification{}, fmt.Errorf("templates %v: %w", names, err)
	}
	return n, nil
}

// Message is the template's message as written.
func (t *Template) Message() string {
	m, _ := t.raw["message"].(string)
	return m
}
