package notifications

import (
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"sigs.k8s.io/yaml"
)

// Trigger is trigger.<name>: conditions, each sending its templates when
// its expression holds.
type Trigger struct {
	Name       string
	Conditions []Condition
}

// Condition is one entry of a trigger.
type Condition struct {
	Description string `json:"description,omitempty"`
	// When is an expr-lang expression over the variables (app, context,
	// time, strings, repo, …); it holds when it yields true.
	When string `json:"when"`
	// OncePer is an expression whose value, when it changes, makes a held
	// condition notify again (a revision, say).
	OncePer string `json:"oncePer,omitempty"`
	// Send names the templates to render and send.
	Send []string `json:"send"`

	when, oncePer *vm.Program
}

// Result is what one condition of a trigger yields for an object.
type Result struct {
	// Key identifies the condition in the notified state: "[i].<hash>".
	Key string
	// Triggered tells whether When held.
	Triggered bool
	// OncePer is OncePer's value, "" when there is none.
	OncePer string
	// Templates are the condition's Send.
	Templates []string
}

func parseTrigger(name, v string) (*Trigger, error) {
	t := &Trigger{Name: name}
	if err := yaml.Unmarshal([]byte(v), &t.Conditions); err != nil {
		return nil, err
	}
	for i := range t.Conditions {
		c := &t.Conditions[i]
		if c.When == "" {
			c.When = "false"
		}
		var err error
		if c.when, err = expr.Compile(c.When); err != nil {
			return nil, fmt.Errorf("condition %d: when: %w", i, err)
		}
		if c.OncePer != "" {
			if c.oncePer, err = expr.Compile(c.OncePer); err != nil {
				return nil, fmt.Errorf("condition %d: oncePer: %w", i, err)
			}
		}
	}
	return t, nil
}

// conditionKey is how Argo CD names a trigger's condition in the
// notified state: its index and the SHA-1 of its expression, in unpadded
// URL-safe base64.
func conditionKey(i int, when string) string {
	sum := sha1.Sum([]byte(when))
	return fmt.Sprintf("[%d].%s", i, base64.RawURLEncoding.EncodeToString(sum[:]))
}

// Evaluate runs every condition over vars. A condition whose expression
// fails to run, or yields no boolean, does not hold (as in Argo CD); the
// failures are returned beside the results.
func (t *Trigger) Evaluate(vars map[string]any) ([]Result, error) {
	out := make([]Result, 0, len(t.Conditions))
	var errs []error
	for i, c := range t.Conditions {
		r := Result{Key: conditionKey(i, c.When), Templates: c.Send}
		v, err := expr.Run(c.when, vars)
		if err != nil {
			errs = append(errs, fmt.Errorf("trigger %s: condition %d: %w", t.Name, i, err))
		}
		held, _ := v.(bool)
		r.Triggered = held
		if held && c.oncePer != nil {
			v, err := expr.Run(c.oncePer, vars)
			if err != nil {
				errs = append(errs, fmt.Errorf("trigger %s: condition %d: oncePer: %w", t.Name, i, err))
				r.Triggered = false
			} else if v != nil {
				r.OncePer = fmt.Sprint(v)
			}
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}
