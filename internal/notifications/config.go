package notifications

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/settings"
)

// Config is argocd-notifications-cm (and its Secret) parsed.
type Config struct {
	// Triggers by name: trigger.<name>.
	Triggers map[string]*Trigger
	// Templates by name: template.<name>.
	Templates map[string]*Template
	// Services by name: service.<type> or service.<type>.<name>.
	Services map[string]Service
	// Subscriptions are the default subscriptions, for every Application
	// their selector matches.
	Subscriptions []DefaultSubscription
	// DefaultTriggers are those a subscription without a trigger gets
	// (defaultTriggers), ServiceDefaultTriggers per service type
	// (defaultTriggers.<service>).
	DefaultTriggers        []string
	ServiceDefaultTriggers map[string][]string
	// Context is the context key, with argocdUrl defaulted as in Argo CD.
	Context map[string]string
	// Secrets are the Secret's values, for templates' .secrets.
	Secrets map[string]string
	// Tenant is set for self-service settings, an Application
	// namespace's own: their services are held to tenantRefusal and a
	// webhook's failures never quote what it answered.
	Tenant bool
}

// DefaultSubscription is one entry of the subscriptions key.
type DefaultSubscription struct {
	Recipients []string `json:"recipients"`
	Triggers   []string `json:"triggers"`
	// Selector is a label selector on the Application ("" matches all).
	Selector string `json:"selector,omitempty"`
}

// Service is one configured notification service.
type Service struct {
	// Type is webhook, email, slack, …
	Type string
	// Name is how destinations name it: the type, or the name after it.
	Name string
	// Options are the service's YAML with $key references resolved.
	Options []byte
}

// The ConfigMap's keys.
const (
	keyTrigger         = settings.NotificationTriggerPrefix
	keyTemplate        = settings.NotificationTemplatePrefix
	keyService         = settings.NotificationServicePrefix
	keySubscriptions   = "subscriptions"
	keyDefaultTriggers = "defaultTriggers"
	keyContext         = "context"
)

// defaultArgoCDURL is context.argocdUrl when the ConfigMap sets none.
const defaultArgoCDURL = "https://localhost:4000"

// Parse reads the notifications settings. An entry that does not parse is
// left out and named in the returned error; the rest is usable, so one
// bad template never silences every notification.
func Parse(s *settings.Notifications) (*Config, error) {
	cfg := &Config{
		Triggers:               map[string]*Trigger{},
		Templates:              map[string]*Template{},
		Services:               map[string]Service{},
		ServiceDefaultTriggers: map[string][]string{},
		Context:                map[string]string{"argocdUrl": defaultArgoCDURL},
		Secrets:                maps.Clone(s.Secrets),
	}
	var errs []error
	keys := slices.Sorted(maps.Keys(s.Data))
	for _, k := range keys {
		if err := cfg.parseKey(k, s.Data[k], s.Secrets); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
		}
	}
	return cfg, errors.Join(errs...)
}

func (cfg *Config) parseKey(k, v string, secrets map[string]string) error {
	switch {
	case strings.HasPrefix(k, keyTrigger):
		t, err := parseTrigger(strings.TrimPrefix(k, keyTrigger), v)
		if err != nil {
			return err
		}
		cfg.Triggers[t.Name] = t
	case strings.HasPrefix(k, keyTemplate):
		t, err := parseTemplate(strings.TrimPrefix(k, keyTemplate), v)
		if err != nil {
			return err
		}
		cfg.Templates[t.Name] = t
	case strings.HasPrefix(k, keyService):
		svc, err := parseService(k, v, secrets)
		if err != nil {
			return err
		}
		cfg.Services[svc.Name] = svc
	case k == keySubscriptions:
		return yaml.Unmarshal([]byte(v), &cfg.Subscriptions)
	case k == keyDefaultTriggers:
		return yaml.Unmarshal([]byte(v), &cfg.DefaultTriggers)
	case strings.HasPrefix(k, keyDefaultTriggers+"."):
		var names []string
		if err := yaml.Unmarshal([]byte(v), &names); err != nil {
			return err
		}
		cfg.ServiceDefaultTriggers[strings.TrimPrefix(k, keyDefaultTriggers+".")] = names
	case k == keyContext:
		ctx := map[string]string{}
		if err := yaml.Unmarshal([]byte(v), &ctx); err != nil {
			return err
		}
		maps.Copy(cfg.Context, ctx)
	}
	return nil
}

// parseService reads service.<type>[.<name>], resolving $key references
// to the Secret's values.
func parseService(key, v string, secrets map[string]string) (Service, error) {
	typ, name, ok := settings.NotificationService(key)
	if !ok {
		return Service{}, errors.New("a service key is service.<type> or service.<type>.<name>")
	}
	var opts any
	if err := yaml.Unmarshal([]byte(v), &opts); err != nil {
		return Service{}, err
	}
	data, err := yaml.Marshal(resolveSecrets(opts, secrets))
	if err != nil {
		return Service{}, err
	}
	return Service{Type: typ, Name: name, Options: data}, nil
}

// secretRef names a key of the Secret inside a string: $key.
var secretRef = regexp.MustCompile(`\$[\w-]+`)

// resolveSecrets replaces each $key in the strings of v by the Secret's
// value of key; a reference naming no key is kept as written, as Argo CD
// keeps it.
func resolveSecrets(v any, secrets map[string]string) any {
	switch v := v.(type) {
	case string:
		return secretRef.ReplaceAllStringFunc(v, func(ref string) string {
			if s, ok := secrets[ref[1:]]; ok {
				return s
			}
			return ref
		})
	case map[string]any:
		for k, e := range v {
			v[k] = resolveSecrets(e, secrets)
		}
	case []any:
		for i, e := range v {
			v[i] = resolveSecrets(e, secrets)
		}
	}
	return v
}
