package notifications

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Processor decides which notifications an Application is owed and sends
// them. It is made for one Config; make a new one when the settings change.
type Processor struct {
	cfg     *Config
	senders map[string]Sender
	// broken holds why a configured service has no Sender.
	broken  map[string]error
	commits RepoReader
	metrics *Metrics
	now     func() time.Time
	// namespace is the Applications' own namespace whose settings cfg
	// holds (self-service notifications); "" for the control namespace's.
	// It qualifies the state's keys, as Argo CD's.
	namespace string
}

// NewProcessor makes the Senders of cfg's services. A service that
// cannot be made fails only the notifications sent through it.
func NewProcessor(cfg *Config, commits RepoReader, m *Metrics) *Processor {
	p := &Processor{cfg: cfg, senders: map[string]Sender{}, broken: map[string]error{}, commits: commits, metrics: m, now: time.Now}
	for name, svc := range cfg.Services {
		s, err := newSender(svc)
		if err != nil {
			p.broken[name] = err
			continue
		}
		p.senders[name] = s
	}
	return p
}

// Delivery is one notification sent, or tried.
type Delivery struct {
	Trigger     string
	Destination Destination
	// Err is why it failed; nil when it was delivered.
	Err error
}

// Process evaluates the triggers app (a plain map of the Application) is
// subscribed to, sends what each condition that now holds owes a
// destination it has not notified, and updates state accordingly. It
// returns the deliveries tried, whether state changed, and what went
// wrong besides deliveries (a trigger missing or failing).
func (p *Processor) Process(ctx context.Context, app map[string]any, subs Subscriptions, state State) ([]Delivery, bool, error) {
	var deliveries []Delivery
	var errs []error
	changed := false
	vars := p.cfg.vars(ctx, app, Destination{}, p.commits)
	for _, trigger := range slices.Sorted(maps.Keys(subs)) {
		t, ok := p.cfg.Triggers[trigger]
		if !ok && p.namespace != "" {
			continue // the control namespace's settings may have it
		}
		if !ok {
			errs = append(errs, fmt.Errorf("trigger '%s' is not configured", trigger))
			continue
		}
		key := trigger
		if p.namespace != "" {
			key = p.namespace + ":" + trigger
		}
		results, err := t.Evaluate(vars)
		if err != nil {
			errs = append(errs, err)
		}
		for _, r := range results {
			p.metrics.evaluated(trigger, r.Triggered)
			for _, d := range subs[trigger] {
				if !r.Triggered {
					changed = state.mark(key, r, d, false, p.now()) || changed
					continue
				}
				if !state.mark(key, r, d, true, p.now()) {
					continue // told already
				}
				changed = true
				err := p.send(ctx, app, r.Templates, d)
				if err != nil {
					// Not told: tried again on the next pass.
					delete(state, stateKey(key, r, d))
				}
				p.metrics.delivered(trigger, d.Service, err == nil)
				deliveries = append(deliveries, Delivery{Trigger: trigger, Destination: d, Err: err})
			}
		}
	}
	return deliveries, changed, errors.Join(errs...)
}

// send renders templates for d and sends the result through d's service.
func (p *Processor) send(ctx context.Context, app map[string]any, templates []string, d Destination) error {
	s, ok := p.senders[d.Service]
	if !ok {
		if err := p.broken[d.Service]; err != nil {
			return fmt.Errorf("notification service '%s': %w", d.Service, err)
		}
		return fmt.Errorf("notification service '%s' is not supported or configured", d.Service)
	}
	n, err := p.cfg.Format(templates, p.cfg.vars(ctx, app, d, p.commits))
	if err != nil {
		return err
	}
	return s.Send(ctx, n, d)
}

// Send renders templates for app and sends the result to d, as a
// condition would: for trying templates by hand.
func (p *Processor) Send(ctx context.Context, app map[string]any, templates []string, d Destination) error {
	return p.send(ctx, app, templates, d)
}

// Use sends what is addressed to the service name through s (the
// console, say), in place of any configured one.
func (p *Processor) Use(name string, s Sender) {
	p.senders[name] = s
	delete(p.broken, name)
}

// RunTrigger evaluates the trigger name for app.
func (p *Processor) RunTrigger(ctx context.Context, name string, app map[string]any) ([]Result, error) {
	t, ok := p.cfg.Triggers[name]
	if !ok {
		return nil, fmt.Errorf("trigger '%s' is not configured", name)
	}
	return t.Evaluate(p.cfg.vars(ctx, app, Destination{}, p.commits))
}
