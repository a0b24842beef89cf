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
	// pacing holds each service's backoff and rate.
	pacing *pacing
	// namespace is the Applications' own namespace whose settings cfg
	// holds (self-service notifications); "" for the control namespace's.
	// It qualifies the state's keys, as Argo CD's.
	namespace string
}

// NewProcessor makes the Senders of cfg's services. A service that
// cannot be made fails only the notifications sent through it.
func NewProcessor(cfg *Config, commits RepoReader, m *Metrics) *Processor {
	p := &Processor{cfg: cfg, senders: map[string]Sender{}, broken: map[string]error{}, commits: commits, metrics: m, now: time.Now, pacing: &pacing{}}
	for name, svc := range cfg.Services {
		s, err := newSender(svc, cfg.Tenant)
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
// wrong besides deliveries (a trigger missing or failing). Process is
// ProcessWith without a commit.
func (p *Processor) Process(ctx context.Context, app map[string]any, subs Subscriptions, state State) ([]Delivery, bool, error) {
	return p.ProcessWith(ctx, app, subs, state, nil, nil)
}

// passWait bounds how long a pass waits for its deliveries when it has a
// late func: one still running after it goes on in the background, so an
// unreachable service holds up no other Application.
const passWait = 2 * time.Second

// LateFunc receives a delivery that finished after its pass returned,
// with its key in the state (to forget it when the delivery failed).
type LateFunc func(d Delivery, stateKey string)

// planned is a delivery a condition owes, marked in state, not yet sent.
type planned struct {
	trigger, key string
	r            Result
	d            Destination
}

// ProcessWith is Process in three steps: the deliveries owed are marked
// in state; commit (when set) stores state before anything is sent, so a
// controller stopped mid-way never sends one twice (commit failing sends
// nothing); then they are sent, a failed one unmarked, to be tried again
// once its service's backoff has passed. A service backing off is not
// tried at all, so it delays no other. With late set, a delivery still
// running after passWait is left out of the result and handed to late
// when it ends.
func (p *Processor) ProcessWith(ctx context.Context, app map[string]any, subs Subscriptions, state State, commit func() error, late LateFunc) ([]Delivery, bool, error) {
	todo, changed, err := p.plan(p.cfg.vars(ctx, app, Destination{}, p.commits), subs, state)
	if len(todo) == 0 {
		return nil, changed, err
	}
	if commit != nil {
		if cerr := commit(); cerr != nil {
			for _, t := range todo {
				delete(state, stateKey(t.key, t.r, t.d))
			}
			return nil, changed, errors.Join(err, fmt.Errorf("storing what is about to be sent: %w", cerr))
		}
	}
	// Stored by commit, state changes again only where a delivery fails.
	changed = commit == nil
	results := p.sendAll(ctx, app, todo)
	wait := make(<-chan time.Time)
	if late != nil {
		timer := time.NewTimer(passWait)
		defer timer.Stop()
		wait = timer.C
	}
	deliveries := make([]Delivery, 0, len(todo))
	for range todo {
		select {
		case res := <-results:
			t := todo[res.i]
			if res.err != nil {
				delete(state, stateKey(t.key, t.r, t.d)) // not told: tried again later
				changed = true
			}
			deliveries = append(deliveries, Delivery{Trigger: t.trigger, Destination: t.d, Err: res.err})
			continue
		case <-wait:
		}
		go awaitLate(todo, len(deliveries), results, late)
		break
	}
	return deliveries, changed, err
}

// awaitLate hands the deliveries of todo not done yet (n are) to late as
// they end.
func awaitLate(todo []planned, n int, results <-chan sendResult, late LateFunc) {
	for range len(todo) - n {
		res := <-results
		t := todo[res.i]
		late(Delivery{Trigger: t.trigger, Destination: t.d, Err: res.err}, stateKey(t.key, t.r, t.d))
	}
}

// parallelSends bounds the deliveries of one pass made at once.
const parallelSends = 8

// sendResult is how the i-th planned delivery went.
type sendResult struct {
	i   int
	err error
}

// sendAll sends the planned deliveries side by side, at most
// parallelSends at once, so a slow or unreachable service holds up none
// of the others; each one's result arrives on the channel as it ends.
func (p *Processor) sendAll(ctx context.Context, app map[string]any, todo []planned) <-chan sendResult {
	results := make(chan sendResult, len(todo))
	slots := make(chan struct{}, parallelSends)
	for i, t := range todo {
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			start := p.now()
			err := p.send(ctx, app, t.r.Templates, t.d)
			p.pacing.result(t.d.Service, err == nil, p.now())
			p.metrics.delivered(t.trigger, t.d.Service, err == nil)
			p.metrics.took(t.d.Service, p.now().Sub(start))
			results <- sendResult{i: i, err: err}
		}()
	}
	return results
}

// plan evaluates the subscribed triggers over vars and marks in state
// what each condition that holds owes a destination not yet told (but
// for services backing off); a condition that no longer holds is
// forgotten for its destinations.
func (p *Processor) plan(vars map[string]any, subs Subscriptions, state State) ([]planned, bool, error) {
	var todo []planned
	var errs []error
	changed := false
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
				switch {
				case !r.Triggered:
					changed = state.mark(key, r, d, false, p.now()) || changed
				case p.pacing.deferred(d.Service, p.now()):
					// Backing off: owed still, tried on a later pass.
				case state.mark(key, r, d, true, p.now()):
					changed = true
					todo = append(todo, planned{trigger: trigger, key: key, r: r, d: d})
				}
			}
		}
	}
	return todo, changed, errors.Join(errs...)
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
	vars := p.cfg.vars(ctx, app, d, p.commits)
	n, err := p.cfg.Format(templates, vars) // bounded; the engine's rendering below is of the same
	if err != nil {
		return err
	}
	if err := p.pacing.limiter(d.Service).Wait(ctx); err != nil {
		return fmt.Errorf("notification service '%s': waiting for its rate: %w", d.Service, err)
	}
	if e, ok := s.(*engineSender); ok {
		en, err := p.cfg.engineNotification(templates, vars)
		if err != nil {
			return err
		}
		return e.sendEngine(ctx, en, d)
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
