package notifications

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
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
const engineSendTimeout = 60 * time.Second

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

// Send implements Sender: the rendered templates, every service's part
// included, handed to the engine's service for the destination.
func (e *engineSender) Send(ctx context.Context, n Notification, to Destination) error {
	var en services.Notification
	if len(n.raw) > 0 {
		if err := json.Unmarshal(n.raw, &en); err != nil {
			return fmt.Errorf("%s: the rendered templates: %w", e.name, err)
		}
	}
	en.Message = n.Message
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
