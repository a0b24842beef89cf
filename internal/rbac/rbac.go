// Package rbac decides what a caller may do, with Argo CD's policy model
// and its argocd-rbac-cm ConfigMap: policy.csv lines
//
//	p, <subject>, <resource>, <action>, <object>, allow|deny
//	g, <user or group>, <role>
//
// on top of the built-in role:readonly and role:admin, policy.default (a
// role everyone has), scopes (the token claims whose values are subjects,
// default [groups]) and policy.matchMode (glob, the default, or regex).
// A request is allowed when some policy allows it and none denies it.
package rbac

import (
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/gobwas/glob"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/settings"
)

// ConfigMapName holds the policy.
const ConfigMapName = "argocd-rbac-cm"

//go:embed builtin-policy.csv
var builtinPolicy string

// modelText is Argo CD's request model with a matcher that follows
// policy.matchMode.
const modelText = `
[request_definition]
r = sub, res, act, obj

[policy_definition]
p = sub, res, act, obj, eft

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = g(r.sub, p.sub) && match(r.res, p.res) && match(r.act, p.act) && match(r.obj, p.obj)
`

// Policy is argocd-rbac-cm's content.
type Policy struct {
	// Version is the ConfigMap's resourceVersion; empty when there is none.
	Version   string
	CSV       string
	Default   string
	Scopes    []string
	MatchMode string
	// NoBuiltin leaves out the built-in roles (role:readonly, role:admin).
	NoBuiltin bool
}

// Load reads argocd-rbac-cm from namespace; none means built-in roles only.
func Load(ctx context.Context, r client.Reader, namespace string) (Policy, error) {
	cm, err := settings.ReadConfigMap(ctx, r, namespace, ConfigMapName)
	if err != nil {
		return Policy{}, err
	}
	p, err := FromData(cm.Data)
	if err != nil {
		return Policy{}, fmt.Errorf("ConfigMap/%s/%s: %w", namespace, ConfigMapName, err)
	}
	p.Version = cm.ResourceVersion
	return p, nil
}

// FromData reads a policy from argocd-rbac-cm's data.
func FromData(data map[string]string) (Policy, error) {
	p := Policy{CSV: data["policy.csv"], Default: data["policy.default"], MatchMode: data["policy.matchMode"], Scopes: []string{"groups"}}
	// Further policy.<name>.csv keys are appended, as Argo CD does.
	for k, v := range data {
		if strings.HasPrefix(k, "policy.") && strings.HasSuffix(k, ".csv") && k != "policy.csv" {
			p.CSV += "\n" + v
		}
	}
	if s := data["scopes"]; s != "" {
		if err := yaml.Unmarshal([]byte(s), &p.Scopes); err != nil {
			return Policy{}, fmt.Errorf("scopes is not a list: %w", err)
		}
	}
	return p, nil
}

// Enforcer answers whether subjects may act on objects. It remembers its
// decisions: an Enforcer is built for one version of the policy, and
// listing a thousand Applications asks the same questions again and again.
type Enforcer struct {
	e           *casbin.SyncedEnforcer
	defaultRole string
	scopes      []string

	decisions     sync.Map // question → bool
	decisionCount atomic.Int64
}

// maxDecisions bounds the decisions an Enforcer remembers; past it, they
// are forgotten all at once and learnt again.
const maxDecisions = 200000

// New builds an Enforcer from the built-in roles and p. A malformed line
// is an error naming it.
func New(p Policy) (*Enforcer, error) {
	m, err := model.NewModelFromString(modelText)
	if err != nil {
		return nil, err
	}
	e, err := casbin.NewSyncedEnforcer(m)
	if err != nil {
		return nil, err
	}
	var match func(pattern, value string) bool
	switch p.MatchMode {
	case "", "glob":
		match = globMatch
	case "regex":
		match = regexMatch
	default:
		return nil, fmt.Errorf("policy.matchMode is %q, want glob or regex", p.MatchMode)
	}
	e.AddFunction("match", func(args ...any) (any, error) {
		value, _ := args[0].(string)
		pattern, _ := args[1].(string)
		return match(pattern, value), nil
	})
	if !p.NoBuiltin {
		if err := addLines(e, "built-in policy", builtinPolicy); err != nil {
			return nil, err
		}
	}
	if err := addLines(e, "policy.csv", p.CSV); err != nil {
		return nil, err
	}
	return &Enforcer{e: e, defaultRole: p.Default, scopes: p.Scopes}, nil
}

func addLines(e *casbin.SyncedEnforcer, source, csv string) error {
	for i, line := range strings.Split(csv, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, ",")
		for j := range fields {
			fields[j] = strings.TrimSpace(fields[j])
		}
		var err error
		switch {
		case fields[0] == "p" && len(fields) == 6 && (fields[5] == "allow" || fields[5] == "deny"):
			_, err = e.AddPolicy(fields[1], fields[2], fields[3], fields[4], fields[5])
		case fields[0] == "p" && len(fields) == 5: // no effect: allow
			_, err = e.AddPolicy(fields[1], fields[2], fields[3], fields[4], "allow")
		case fields[0] == "g" && len(fields) == 3:
			_, err = e.AddGroupingPolicy(fields[1], fields[2])
		default:
			return fmt.Errorf("%s line %d: %q is neither \"p, subject, resource, action, object, allow|deny\" nor \"g, subject, role\"", source, i+1, line)
		}
		if err != nil {
			return fmt.Errorf("%s line %d: %w", source, i+1, err)
		}
	}
	return nil
}

// Enforce reports whether any of subjects (a user and its groups), or
// the default role, may perform action on object of resource.
func (e *Enforcer) Enforce(subjects []string, resource Resource, action Action, object string) bool {
	question := strings.Join(subjects, "\x00") + "\x01" + string(resource) + "\x01" + string(action) + "\x01" + object
	if ok, seen := e.decisions.Load(question); seen {
		return ok.(bool)
	}
	ok := e.enforce(subjects, resource, action, object)
	if e.decisionCount.Add(1) > maxDecisions {
		e.decisions.Clear()
		e.decisionCount.Store(0)
	}
	e.decisions.Store(question, ok)
	return ok
}

func (e *Enforcer) enforce(subjects []string, resource Resource, action Action, object string) bool {
	try := func(sub string) bool {
		ok, err := e.e.Enforce(sub, string(resource), string(action), object)
		return err == nil && ok
	}
	if e.defaultRole != "" && try(e.defaultRole) {
		return true
	}
	for _, s := range subjects {
		if s != "" && try(s) {
			return true
		}
	}
	return false
}

// Subjects returns the policy subjects a token's claims name: its subject
// and the values of the scope claims (groups by default).
func (e *Enforcer) Subjects(claims map[string]any) []string {
	var out []string
	if sub, _ := claims["sub"].(string); sub != "" {
		out = append(out, sub)
	}
	for _, scope := range e.scopes {
		switch v := claims[scope].(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		case []any:
			for _, g := range v {
				if s, ok := g.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// compiled holds compiled patterns (*glob.Pattern or *regexp.Regexp, nil for
// a pattern that does not compile), as every request matches them again.
var compiled sync.Map

func globMatch(pattern, value string) bool {
	if pattern == value || pattern == "*" {
		return true
	}
	g, ok := compiled.Load("glob:" + pattern)
	if !ok {
		c, err := glob.Compile(pattern)
		if err != nil {
			c = nil
		}
		g, _ = compiled.LoadOrStore("glob:"+pattern, c)
	}
	m, _ := g.(*glob.Pattern)
	return m != nil && m.Match(value)
}

func regexMatch(pattern, value string) bool {
	r, ok := compiled.Load("regex:" + pattern)
	if !ok {
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err != nil {
			re = nil
		}
		r, _ = compiled.LoadOrStore("regex:"+pattern, re)
	}
	re, _ := r.(*regexp.Regexp)
	return re != nil && re.MatchString(value)
}
