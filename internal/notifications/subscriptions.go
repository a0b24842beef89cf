package notifications

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// The annotations that subscribe an Application (or every Application of
// an AppProject) to notifications.
const (
	// AnnotationSubscribe prefixes subscribe.<trigger>.<service> and
	// subscribe.<service>; the value lists recipients split by ";".
	AnnotationSubscribe = "notifications.argoproj.io/subscribe."
	// AnnotationSubscriptions holds a YAML list of subscriptions.
	AnnotationSubscriptions = "notifications.argoproj.io/subscriptions"
)

// Subscriptions map trigger names to the destinations they notify.
type Subscriptions map[string][]Destination

func (s Subscriptions) add(trigger string, d Destination) {
	if !slices.Contains(s[trigger], d) {
		s[trigger] = append(s[trigger], d)
	}
}

// yamlSubscription is one entry of AnnotationSubscriptions.
type yamlSubscription struct {
	Trigger      []string `json:"trigger"`
	Destinations []struct {
		Service    string   `json:"service"`
		Recipients []string `json:"recipients"`
	} `json:"destinations"`
}

// defaultTriggers are the triggers a subscription naming none gets: the
// service's own defaults (by service name, then type), else the global
// ones.
func (cfg *Config) defaultTriggers(service string) []string {
	if t, ok := cfg.ServiceDefaultTriggers[service]; ok {
		return t
	}
	if svc, ok := cfg.Services[service]; ok {
		if t, ok := cfg.ServiceDefaultTriggers[svc.Type]; ok {
			return t
		}
	}
	return cfg.DefaultTriggers
}

// splitRecipients splits an annotation's value: recipients are separated
// by ";" and trimmed; an empty value is one empty recipient (a webhook
// needs none).
func splitRecipients(v string) []string {
	var out []string
	for _, r := range strings.Split(v, ";") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// addAnnotations adds the subscriptions annotations declare. An
// AnnotationSubscriptions value that does not parse is skipped: one
// user's typo never stops the others' notifications.
func (cfg *Config) addAnnotations(s Subscriptions, annotations map[string]string) {
	for k, v := range annotations {
		if k == AnnotationSubscriptions {
			var list []yamlSubscription
			if yaml.Unmarshal([]byte(v), &list) != nil {
				continue
			}
			for _, sub := range list {
				for _, d := range sub.Destinations {
					triggers := sub.Trigger
					if len(triggers) == 0 {
						triggers = cfg.defaultTriggers(d.Service)
					}
					for _, t := range triggers {
						for _, r := range d.Recipients {
							s.add(t, Destination{Service: d.Service, Recipient: r})
						}
					}
				}
			}
			continue
		}
		rest, ok := strings.CutPrefix(k, AnnotationSubscribe)
		if !ok || rest == "" {
			continue
		}
		trigger, service, two := strings.Cut(rest, ".")
		triggers := []string{trigger}
		if !two {
			service, triggers = trigger, cfg.defaultTriggers(trigger)
		}
		for _, t := range triggers {
			for _, r := range splitRecipients(v) {
				s.add(t, Destination{Service: service, Recipient: r})
			}
		}
	}
}

// addDefaults adds the ConfigMap's default subscriptions whose selector
// matches the Application's labels. Recipients are "<service>:<recipient>".
func (cfg *Config) addDefaults(s Subscriptions, appLabels map[string]string) {
	for _, sub := range cfg.Subscriptions {
		if sub.Selector != "" {
			sel, err := labels.Parse(sub.Selector)
			if err != nil || !sel.Matches(labels.Set(appLabels)) {
				continue
			}
		}
		for _, rec := range sub.Recipients {
			service, recipient, _ := strings.Cut(rec, ":")
			triggers := sub.Triggers
			if len(triggers) == 0 {
				triggers = cfg.defaultTriggers(service)
			}
			for _, t := range triggers {
				s.add(t, Destination{Service: service, Recipient: recipient})
			}
		}
	}
}

// SubscriptionsOf gathers what an Application is subscribed to: its own
// annotations, its AppProject's, and the default subscriptions.
func (cfg *Config) SubscriptionsOf(appLabels, appAnnotations, projectAnnotations map[string]string) Subscriptions {
	s := Subscriptions{}
	cfg.addAnnotations(s, appAnnotations)
	cfg.addAnnotations(s, projectAnnotations)
	cfg.addDefaults(s, appLabels)
	return s
}
