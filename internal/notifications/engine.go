package notifications

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"

	"github.com/capstan-cd/capstan/internal/safetext"
)

// engineTypes are the service types delivered through Argo's
// notifications-engine, whose senders Argo CD itself uses, so every option
// Argo CD documents for them holds; webhook and email are Capstan's own.
var engineTypes = map[string]bool{
	"slack": true, "mattermost": true, "rocketchat": true, "teams": true, "teams-workflows": true, "googlechat": true,
	"webex": true, "telegram": true, "opsgenie": true, "pagerduty": true, "pagerdutyv2": true, "alertmanager": true,
	"grafana": true, "github": true, "newrelic": true, "pushover": true, "nats": true, "awssqs": true, "gcppubsub": true,
}

// engineSendTimeout bounds one delivery through the engine, whose senders
// take no context: past it the delivery counts as failed (and is tried
// again later) while the sender's own call runs out in the background.
const engineSendTimeout = 30 * time.Second

// engineSender delivers through one notifications-engine service.
type engineSender struct {
	name string
	svc  services.NotificationService
}

// newEngineSender makes the engine's service of svc's type from its
// options (secrets already resolved).
func newEngineSender(svc Service) (Sender, error) {
	s, err := services.NewService(svc.Type, svc.Options)
	if err != nil {
		return nil, err
	}
	return &engineSender{name: svc.Name, svc: s}, nil
}

// Send implements Sender for what Capstan rendered itself; the
// Processor hands engine services the engine's own rendering instead
// (see sendEngine).
func (e *engineSender) Send(ctx context.Context, n Notification, to Destination) error {
	return e.sendEngine(ctx, services.Notification{Message: n.Message}, to)
}

// sendEngine hands one notification to the engine's service, waiting at
// most engineSendTimeout for it.
func (e *engineSender) sendEngine(ctx context.Context, en services.Notification, to Destination) error {
	ctx, cancel := context.WithTimeout(ctx, engineSendTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.svc.Send(en, services.Destination{Service: to.Service, Recipient: to.Recipient}) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer within %s: %w", e.name, engineSendTimeout, ctx.Err())
	}
}

// engineNotification renders the named templates as the engine renders
// them for its services: each template's parts through the engine's
// templaters (which also fill what a service derives, such as the GitHub
// commit a status is for), over Capstan's variables and functions. The
// caller has rendered them through Format first, whose bounds the same
// templates and variables have met.
func (cfg *Config) engineNotification(names []string, vars map[string]any) (services.Notification, error) {
	var out services.Notification
	for _, name := range names {
		t, ok := cfg.Templates[name]
		if !ok {
			return out, fmt.Errorf("template '%s' is not supported", name)
		}
		data, err := json.Marshal(t.raw)
		if err != nil {
			return out, err
		}
		var n services.Notification
		if err := json.Unmarshal(data, &n); err != nil {
			return out, fmt.Errorf("template %s: %w", name, err)
		}
		templater, err := n.GetTemplater(name, safetext.Funcs())
		if err != nil {
			return out, fmt.Errorf("template %s: %w", name, err)
		}
		if err := templater(&out, vars); err != nil {
			return out, fmt.Errorf("template %s: %w", name, err)
		}
	}
	return out, nil
}
