package server

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// accountRoutes registers the account service: accounts, passwords, tokens and can-i.
func (s *Server) accountRoutes() {
	s.mux.HandleFunc("GET /api/v1/account", s.api(s.listAccounts))
	s.mux.HandleFunc("PUT /api/v1/account/password", s.api(s.updatePassword))
	s.mux.HandleFunc("GET /api/v1/account/{name}", s.api(s.getAccount))
	s.mux.HandleFunc("GET /api/v1/account/can-i/{resource}/{action}/{object...}", s.api(s.canI))
	s.mux.HandleFunc("POST /api/v1/account/{name}/token", s.api(s.createToken))
	s.mux.HandleFunc("DELETE /api/v1/account/{name}/token/{id}", s.api(s.deleteToken))
}

// newAccountInfo is the API's view of a local account.
func newAccountInfo(name string, a *settings.Account) apiwire.Account {
	info := apiwire.Account{Name: name, Enabled: a.Enabled, Capabilities: a.Capabilities}
	for _, t := range a.Tokens {
		info.Tokens = append(info.Tokens, apiwire.Token{ID: t.ID, IssuedAt: t.IssuedAt, ExpiresAt: t.ExpiresAt})
	}
	return info
}

// listAccounts answers GET /api/v1/account.
func (s *Server) listAccounts(r *http.Request, c *caller) (any, error) {
	accounts, err := settings.Accounts(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	items := []apiwire.Account{}
	for name, a := range accounts {
		if c.can(rbac.ResourceAccounts, rbac.ActionGet, name) || name == c.claims.Subject {
			items = append(items, newAccountInfo(name, a))
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return apiwire.AccountList{Items: items}, nil
}

// getAccount answers GET /api/v1/account/{name}: one account, to the
// caller itself or one who may get it.
func (s *Server) getAccount(r *http.Request, c *caller) (any, error) {
	name := r.PathValue("name")
	if !c.can(rbac.ResourceAccounts, rbac.ActionGet, name) && name != c.claims.Subject {
		return nil, c.forbidden(rbac.ResourceAccounts, rbac.ActionGet, name)
	}
	a, err := s.findAccount(r, name)
	if err != nil {
		return nil, err
	}
	return newAccountInfo(name, a), nil
}

// findAccount returns the local account name; 404 when there is none.
func (s *Server) findAccount(r *http.Request, name string) (*settings.Account, error) {
	accounts, err := settings.Accounts(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	if a := accounts[name]; a != nil {
		return a, nil
	}
	return nil, notFound(fmt.Sprintf("account %s does not exist", name))
}

// canI answers GET /api/v1/account/can-i/{resource}/{action}/{object...}
// with {"value": "yes"|"no"}.
func (s *Server) canI(r *http.Request, c *caller) (any, error) {
	answer := "no"
	resource, action := rbac.Resource(r.PathValue("resource")), rbac.Action(r.PathValue("action"))
	if resource == rbac.ResourceApplications && action == rbac.ActionRollback {
		// Asked of what a rollback needs, as Argo CD answers it.
		var err error
		if action, err = s.rollbackAction(r.Context()); err != nil {
			return nil, err
		}
	}
	if c.can(resource, action, r.PathValue("object")) {
		answer = "yes"
	}
	return map[string]string{"value": answer}, nil
}

// mayManage reports whether the caller may change account name: its own,
// or any with accounts/update.
func (c *caller) mayManage(name string) bool {
	return name == c.claims.Subject || c.can(rbac.ResourceAccounts, rbac.ActionUpdate, name)
}

// createToken answers POST /api/v1/account/{name}/token with a new API key
// for an account that has the apiKey capability; its id is recorded in
// argocd-secret so it can be listed and revoked.
func (s *Server) createToken(r *http.Request, c *caller) (any, error) {
	name := r.PathValue("name")
	var req struct {
		ExpiresIn jsonInt `json:"expiresIn"` // seconds; 0: never
		ID        string  `json:"id"`
	}
	if err := decode(r, &req, "token request", true); err != nil {
		return nil, err
	}
	if !c.mayManage(name) {
		return nil, c.forbidden(rbac.ResourceAccounts, rbac.ActionUpdate, name)
	}
	a, err := s.findAccount(r, name)
	if err != nil {
		return nil, err
	}
	if !a.Enabled || !a.Can(settings.CapabilityAPIKey) {
		return nil, badRequest(fmt.Sprintf("account %s does not have the apiKey capability, or is disabled", name))
	}
	if req.ID == "" {
		req.ID = newID()
	}
	now := time.Now()
	tok := settings.Token{ID: req.ID, IssuedAt: now.Unix()}
	if req.ExpiresIn > 0 {
		tok.ExpiresAt = now.Add(time.Duration(req.ExpiresIn) * time.Second).Unix()
	}
	signed, err := s.sessions.Create(name, time.Duration(req.ExpiresIn)*time.Second, req.ID)
	if err != nil {
		return nil, err
	}
	if err := settings.AddToken(r.Context(), s.opts.Client, s.opts.Namespace, name, tok); err != nil {
		return nil, conflict(err.Error())
	}
	return apiwire.SessionToken{Token: signed}, nil
}

// deleteToken answers DELETE /api/v1/account/{name}/token/{id}.
func (s *Server) deleteToken(r *http.Request, c *caller) (any, error) {
	name := r.PathValue("name")
	if !c.mayManage(name) {
		return nil, c.forbidden(rbac.ResourceAccounts, rbac.ActionUpdate, name)
	}
	if err := settings.RemoveToken(r.Context(), s.opts.Client, s.opts.Namespace, name, r.PathValue("id")); err != nil {
		return nil, notFound(err.Error())
	}
	return map[string]string{}, nil
}

// updatePassword answers PUT /api/v1/account/password: the caller proves
// who they are with their current password and sets a new one (matching
// argocd-cm's passwordPattern, 8 to 32 characters by default) for
// themselves or, with accounts/update,
// for another account. Sessions issued before the change stop working.
func (s *Server) updatePassword(r *http.Request, c *caller) (any, error) {
	var req struct {
		Name            string `json:"name"`
		CurrentPassword string `json:"currentPassword"`
		NewPassword     string `json:"newPassword"`
	}
	if err := decode(r, &req, "password request", false); err != nil {
		return nil, err
	}
	if req.Name == "" {
		req.Name = c.claims.Subject
	}
	if !c.mayManage(req.Name) {
		return nil, c.forbidden(rbac.ResourceAccounts, rbac.ActionUpdate, req.Name)
	}
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	pattern, err := cm.PasswordPattern()
	if err != nil {
		return nil, err
	}
	if !pattern.MatchString(req.NewPassword) {
		return nil, badRequest(fmt.Sprintf("New password does not match the following expression: %s.", pattern))
	}
	accounts, err := settings.Accounts(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	var self []byte
	if a := accounts[c.claims.Subject]; a != nil {
		self = a.PasswordHash
	}
	if err := s.sessions.VerifyPassword(c.claims.Subject, req.CurrentPassword, self); err != nil {
		return nil, withStatus(http.StatusUnauthorized, errors.New("current password does not match"))
	}
	target := accounts[req.Name]
	if target == nil || !target.Can(settings.CapabilityLogin) {
		return nil, badRequest(fmt.Sprintf("account %s does not exist or cannot log in", req.Name))
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(req.NewPassword), bcrypt.DefaultCost)
	if err != nil {
		return nil, err
	}
	if err := settings.SetPassword(r.Context(), s.opts.Client, s.opts.Namespace, req.Name, hash); err != nil {
		return nil, err
	}
	return map[string]string{}, nil
}
