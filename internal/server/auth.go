package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/session"
	"github.com/capstan-cd/capstan/internal/settings"
)

// authenticate returns the caller's claims from a bearer token or the
// session cookie, and all the token's claims (for RBAC scopes). It takes
// Capstan's own tokens and ID tokens of the configured OIDC provider.
// A session needs an enabled account that may log in and was issued
// after its password last changed; an API key (a token with an id) needs
// an account with apiKey whose token list still has the id; a project
// role token needs its role to still list it.
func (s *Server) authenticate(r *http.Request) (*session.Claims, map[string]any, error) {
	token := s.requestToken(r)
	if token == "" {
		return nil, nil, errNoSession
	}
	if revoked, err := s.revocations.revoked(r.Context(), token); err != nil || revoked {
		return nil, nil, cmp.Or(err, session.ErrRevokedToken)
	}
	if claims, raw, isSSO, err := s.authenticateSSO(r.Context(), token); isSSO {
		return claims, raw, err
	}
	claims, err := s.sessions.Parse(token)
	if err != nil {
		return nil, nil, err
	}
	if strings.HasPrefix(claims.Subject, projectSubjectPrefix) {
		if _, err := s.authenticateProjectToken(r.Context(), claims); err != nil {
			return nil, nil, err
		}
		return claims, map[string]any{"sub": claims.Subject}, nil
	}
	local, err := s.authenticateAccount(r.Context(), claims)
	if err != nil {
		return nil, nil, err
	}
	return local, map[string]any{"sub": local.Subject}, nil
}

// authenticateAccount checks a local account's token as Argo CD does,
// and returns its claims with the account as the subject. A session's
// subject is "<account>:login" (with a jti naming the session); an API
// key's is the account (with a jti naming the key, which must still be
// the account's). A token of an older Capstan — the account alone, with
// no jti — is a session.
func (s *Server) authenticateAccount(ctx context.Context, claims *session.Claims) (*session.Claims, error) {
	name, capability, hasCapability := strings.Cut(claims.Subject, ":")
	if !hasCapability {
		capability = settings.CapabilityAPIKey
		if claims.ID == "" {
			capability = settings.CapabilityLogin
		}
	}
	accounts, err := settings.Accounts(ctx, s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	a := accounts[name]
	switch {
	case a == nil || !a.Enabled:
		return nil, fmt.Errorf("account %s does not exist or is disabled", name)
	case capability != settings.CapabilityLogin && capability != settings.CapabilityAPIKey:
		return nil, fmt.Errorf("token subject %q names no capability of account %s", claims.Subject, name)
	case !a.Can(capability):
		return nil, fmt.Errorf("account %s does not have '%s' capability", name, capability)
	case capability == settings.CapabilityAPIKey && !slices.ContainsFunc(a.Tokens, func(t settings.Token) bool { return t.ID == claims.ID }):
		return nil, fmt.Errorf("account %s has no token with id %s", name, claims.ID)
	case capability == settings.CapabilityLogin && a.PasswordMtime != nil && claims.IssuedAt != nil && claims.IssuedAt.Before(a.PasswordMtime.Truncate(time.Second)):
		return nil, errors.New("session was issued before the password last changed")
	}
	local := *claims
	local.Subject = name
	return &local, nil
}

// caller is an authenticated request's identity and the policy to judge
// it by.
type caller struct {
	claims   *session.Claims
	subjects []string
	enforcer *rbac.Enforcer
	// project is set for a project role token: its project.
	project string
	// email is the session's email claim, if any (an SSO user's).
	email string
}

// identity is the caller's email, if any, and the groups its policy
// judges it by: the subjects besides its own name.
func (c *caller) identity() (email string, groups []string) {
	for _, s := range c.subjects {
		if s != c.claims.Subject {
			groups = append(groups, s)
		}
	}
	return c.email, groups
}

// can reports whether the caller may take action on object. A project role
// token reaches the objects of project-scoped resources in its own project
// only.
func (c *caller) can(resource rbac.Resource, action rbac.Action, object string) bool {
	if c.project != "" && resource.ProjectScoped() && !strings.HasPrefix(object, c.project+"/") {
		return false
	}
	return c.enforcer.Enforce(c.subjects, resource, action, object)
}

// may is nil when the caller may take action on object, and Argo CD's 403
// when not.
func (c *caller) may(resource rbac.Resource, action rbac.Action, object string) error {
	if c.can(resource, action, object) {
		return nil
	}
	return c.forbidden(resource, action, object)
}

// forbidden is Argo CD's 403 for a refused action.
func (c *caller) forbidden(resource rbac.Resource, action rbac.Action, object string) error {
	return withStatus(http.StatusForbidden, fmt.Errorf("permission denied: %s, %s, %s, sub: %s", resource, action, object, c.claims.Subject))
}

// authorized runs h for authenticated callers with the current policy,
// and answers 401 for the others. A project role token is judged by the
// global policy plus its project's role policies.
func (s *Server) authorized(h func(http.ResponseWriter, *http.Request, *caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.caller(r)
		if errors.Is(err, errUnauthenticated) {
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		if err != nil {
			s.reply(w, nil, err)
			return
		}
		// A route naming an object in its path has the name checked here
		// (a {name} segment is never empty); others check their own.
		kind, name := namedKind(r.URL.Path), cmp.Or(r.PathValue("name"), r.PathValue("appName"))
		if kind != "" && name != "" {
			if err := checkName(kind, name); err != nil {
				s.reply(w, nil, err)
				return
			}
		}
		h(w, r, c)
	}
}

// errUnauthenticated marks a request without a valid session.
var errUnauthenticated = errors.New("invalid session")

// headlessUser is who calls a headless server.
const headlessUser = "admin"

// caller is who makes a request, with the policy to judge it by: every
// caller of a headless server, or of one whose authentication is
// disabled, is an administrator.
func (s *Server) caller(r *http.Request) (*caller, error) {
	if s.opts.Headless || s.opts.DisableAuth {
		enf, err := s.headlessEnforcer()
		if err != nil {
			return nil, err
		}
		return &caller{claims: &session.Claims{Subject: headlessUser}, subjects: []string{headlessUser}, enforcer: enf}, nil
	}
	claims, raw, err := s.authenticate(r)
	if errors.Is(err, errNoSession) && s.anonymousEnabled(r) {
		// users.anonymous.enabled: no session is the anonymous user, whom
		// policy.default alone lets in.
		claims, raw, err = &session.Claims{}, map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnauthenticated, err)
	}
	enf, err := s.enforcer(r, claims)
	if err != nil {
		return nil, err
	}
	c := &caller{claims: claims, subjects: enf.Subjects(raw), enforcer: enf}
	c.email, _ = raw["email"].(string)
	if rest, ok := strings.CutPrefix(claims.Subject, projectSubjectPrefix); ok {
		c.project, _, _ = strings.Cut(rest, ":")
	}
	return c, nil
}

// anonymousEnabled reports whether argocd-cm's users.anonymous.enabled
// lets requests without a session in.
func (s *Server) anonymousEnabled(r *http.Request) bool {
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	return err == nil && cm.AnonymousEnabled()
}

// headlessEnforcer allows everything: a headless server's user has the
// kubeconfig's rights, which Kubernetes judges.
func (s *Server) headlessEnforcer() (*rbac.Enforcer, error) {
	s.rbacMu.Lock()
	defer s.rbacMu.Unlock()
	if e, ok := s.rbac["headless"]; ok {
		return e, nil
	}
	e, err := rbac.New(rbac.Policy{Default: "role:admin"})
	if err != nil {
		return nil, err
	}
	s.rbac["headless"] = e
	return e, nil
}

// enforcer returns the enforcer for argocd-rbac-cm's current version
// (and, for a project role token, its project's version, whose role
// policies it adds), built once per version rather than per request.
func (s *Server) enforcer(r *http.Request, claims *session.Claims) (*rbac.Enforcer, error) {
	p, err := rbac.Load(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	key := "policy@" + p.Version
	var proj *v1alpha1.AppProject
	if rest, ok := strings.CutPrefix(claims.Subject, projectSubjectPrefix); ok {
		name, _, _ := strings.Cut(rest, ":")
		proj = &v1alpha1.AppProject{}
		if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, proj); err != nil {
			return nil, err
		}
		key += "|project:" + name + "@" + proj.ResourceVersion
	}
	s.rbacMu.Lock()
	defer s.rbacMu.Unlock()
	if e, ok := s.rbac[key]; ok {
		return e, nil
	}
	if proj != nil {
		p.CSV += "\n" + projectPolicy(proj)
	}
	e, err := rbac.New(p)
	if err != nil {
		return nil, err
	}
	if len(s.rbac) >= maxEnforcers {
		clear(s.rbac) // versions gone by; the current ones are built again
	}
	s.rbac[key] = e
	return e, nil
}

// maxEnforcers bounds the enforcers kept, one per version of the policy
// and of each project whose role tokens are in use.
const maxEnforcers = 64

var errNoSession = errors.New("no session information")
