package server

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// accountInfo is an account as GET /api/v1/account lists it.
type accountInfo struct {
	Name         string         `json:"name"`
	Enabled      bool           `json:"enabled"`
	Capabilities []string       `json:"capabilities"`
	Tokens       []accountToken `json:"tokens,omitempty"`
}

// accountToken is Argo CD's account Token message: its int64 times are
// strings in JSON.
type accountToken struct {
	ID        string `json:"id"`
	IssuedAt  int64  `json:"issuedAt,string"`
	ExpiresAt int64  `json:"expiresAt,string,omitempty"`
}

// newAccountInfo is the API's view of a local account.
func newAccountInfo(name string, a *settings.Account) accountInfo {
	info := accountInfo{Name: name, Enabled: a.Enabled, Capabilities: a.Capabilities}
	for _, t := range a.Tokens {
		info.Tokens = append(info.Tokens, accountToken{ID: t.ID, IssuedAt: t.IssuedAt, ExpiresAt: t.ExpiresAt})
	}
	return info
}

// listAccounts answers GET /api/v1/account.
func (s *Server) listAccounts(w http.ResponseWriter, r *http.Request, c *caller) {
	accounts, err := settings.Accounts(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	items := []accountInfo{}
	for name, a := range accounts {
		if c.can(rbac.ResourceAccounts, rbac.ActionGet, name) || name == c.claims.Subject {
			items = append(items, newAccountInfo(name, a))
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// getAccount answers GET /api/v1/account/{name}: one account, to the
// caller itself or one who may get it.
func (s *Server) getAccount(w http.ResponseWriter, r *http.Request, c *caller) {
	name := r.PathValue("name")
	if !c.can(rbac.ResourceAccounts, rbac.ActionGet, name) && name != c.claims.Subject {
		c.denied(w, rbac.ResourceAccounts, rbac.ActionGet, name)
		return
	}
	a := s.findAccount(w, r, name)
	if a == nil {
		return
	}
	writeJSON(w, http.StatusOK, newAccountInfo(name, a))
}

// findAccount returns the local account name, or answers 404 (or the
// error reading the settings) and returns nil.
func (s *Server) findAccount(w http.ResponseWriter, r *http.Request, name string) *settings.Account {
	accounts, err := settings.Accounts(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		s.reply(w, nil, err)
		return nil
	}
	a := accounts[name]
	if a == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("account %s does not exist", name))
	}
	return a
}

// canI answers GET /api/v1/account/can-i/{resource}/{action}/{object...}
// with {"value": "yes"|"no"}.
func (s *Server) canI(w http.ResponseWriter, r *http.Request, c *caller) {
	answer := "no"
	if c.can(rbac.Resource(r.PathValue("resource")), rbac.Action(r.PathValue("action")), r.PathValue("object")) {
		answer = "yes"
	}
	writeJSON(w, http.StatusOK, map[string]string{"value": answer})
}

// mayManage reports whether the caller may change account name: its own,
// or any with accounts/update.
func (c *caller) mayManage(name string) bool {
	return name == c.claims.Subject || c.can(rbac.ResourceAccounts, rbac.ActionUpdate, name)
}

// createToken answers POST /api/v1/account/{name}/token with a new API key
// for an account that has the apiKey capability; its id is recorded in
// argocd-secret so it can be listed and revoked.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, c *caller) {
	name := r.PathValue("name")
	var req struct {
		ExpiresIn jsonInt `json:"expiresIn"` // seconds; 0: never
		ID        string  `json:"id"`
	}
	if !decodeBody(w, r, &req, "token request", true) {
		return
	}
	if !c.mayManage(name) {
		c.denied(w, rbac.ResourceAccounts, rbac.ActionUpdate, name)
		return
	}
	a := s.findAccount(w, r, name)
	if a == nil {
		return
	}
	if !a.Enabled || !a.Can(settings.CapabilityAPIKey) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("account %s does not have the apiKey capability, or is disabled", name))
		return
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
		s.reply(w, nil, err)
		return
	}
	if err := settings.AddToken(r.Context(), s.opts.Client, s.opts.Namespace, name, tok); err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": signed})
}

// deleteToken answers DELETE /api/v1/account/{name}/token/{id}.
func (s *Server) deleteToken(w http.ResponseWriter, r *http.Request, c *caller) {
	name := r.PathValue("name")
	if !c.mayManage(name) {
		c.denied(w, rbac.ResourceAccounts, rbac.ActionUpdate, name)
		return
	}
	if err := settings.RemoveToken(r.Context(), s.opts.Client, s.opts.Namespace, name, r.PathValue("id")); err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// updatePassword answers PUT /api/v1/account/password: the caller proves
// who they are with their current password and sets a new one (matching
// argocd-cm's passwordPattern, 8 to 32 characters by default) for
// themselves or, with accounts/update,
// for another account. Sessions issued before the change stop working.
func (s *Server) updatePassword(w http.ResponseWriter, r *http.Request, c *caller) {
	var req struct {
		Name            string `json:"name"`
		CurrentPassword string `json:"currentPassword"`
		NewPassword     string `json:"newPassword"`
	}
	if !decodeBody(w, r, &req, "password request", false) {
		return
	}
	if req.Name == "" {
		req.Name = c.claims.Subject
	}
	if !c.mayManage(req.Name) {
		c.denied(w, rbac.ResourceAccounts, rbac.ActionUpdate, req.Name)
		return
	}
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	pattern, err := cm.PasswordPattern()
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	if !pattern.MatchString(req.NewPassword) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("New password does not match the following expression: %s.", pattern))
		return
	}
	accounts, err := settings.Accounts(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	var self []byte
	if a := accounts[c.claims.Subject]; a != nil {
		self = a.PasswordHash
	}
	if err := s.sessions.VerifyPassword(c.claims.Subject, req.CurrentPassword, self); err != nil {
		writeError(w, http.StatusUnauthorized, "current password does not match")
		return
	}
	target := accounts[req.Name]
	if target == nil || !target.Can(settings.CapabilityLogin) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("account %s does not exist or cannot log in", req.Name))
		return
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(req.NewPassword), bcrypt.DefaultCost)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	if err := settings.SetPassword(r.Context(), s.opts.Client, s.opts.Namespace, req.Name, hash); err != nil {
		s.reply(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}
