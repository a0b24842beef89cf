package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/settings"
)

// revocations are the session tokens logged out before they expire
// (settings.RevokedSessionsConfigMap), which every replica refuses: each
// holds the list in memory, read again whenever the ConfigMap changes
// (through the informer behind Options.Client), and its own logouts at
// once. Without informers the ConfigMap is read on each check.
type revocations struct {
	s *Server

	mu       sync.RWMutex
	ids      map[string]time.Time
	followed bool // kept current by the informer
}

// follow keeps the list current from the ConfigMap informer, when there is one.
func (v *revocations) follow(ctx context.Context) error {
	if v.s.opts.Informers == nil {
		return nil
	}
	inf, err := v.s.opts.Informers.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return err
	}
	observe := func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == settings.RevokedSessionsConfigMap && cm.Namespace == v.s.opts.Namespace {
			v.replace(settings.Revocations(cm, time.Now()))
		}
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: observe, UpdateFunc: func(_, obj any) { observe(obj) }})
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.followed = true
	v.mu.Unlock()
	return nil
}

// replace takes the ConfigMap's entries, keeping this replica's own that
// it does not list yet.
func (v *revocations) replace(ids map[string]time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := time.Now()
	for id, until := range v.ids {
		if _, listed := ids[id]; !listed && until.After(now) {
			ids[id] = until
		}
	}
	v.ids = ids
}

// revoked reports whether token was logged out.
func (v *revocations) revoked(ctx context.Context, token string) (bool, error) {
	id := settings.RevocationID(token)
	v.mu.RLock()
	until, ok := v.ids[id]
	followed := v.followed
	v.mu.RUnlock()
	if ok && until.After(time.Now()) {
		return true, nil
	}
	if followed {
		return false, nil
	}
	cm := &corev1.ConfigMap{}
	err := v.s.opts.Client.Get(ctx, client.ObjectKey{Namespace: v.s.opts.Namespace, Name: settings.RevokedSessionsConfigMap}, cm)
	if err != nil {
		return false, client.IgnoreNotFound(err)
	}
	_, ok = settings.Revocations(cm, time.Now())[id]
	return ok, nil
}

// revoke logs token out until it expires: at once on this replica, then
// on the others through the ConfigMap. A token without an expiry (an API
// key, revoked by deleting it) or already expired needs nothing.
func (v *revocations) revoke(ctx context.Context, token string) error {
	until, ok := expiry(token)
	if !ok || !until.After(time.Now()) {
		return nil
	}
	id := settings.RevocationID(token)
	v.mu.Lock()
	if v.ids == nil {
		v.ids = map[string]time.Time{}
	}
	v.ids[id] = until
	v.mu.Unlock()
	return settings.RevokeSession(ctx, v.s.opts.Client, v.s.opts.Namespace, id, until)
}

// expiry is a token's exp claim, read without checking its signature:
// only a token that authenticated is revoked, and a forged one only
// fills an entry that expires with it.
func expiry(token string) (time.Time, bool) {
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		return time.Time{}, false
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return time.Time{}, false
	}
	return exp.Time, true
}

// logoutToken revokes the session r's cookies carry, if it
// authenticates, and drops the cookies: the browser's logout, Argo CD's
// CLI's (POST /auth/logout with the token as its cookie) and the session
// service's Delete alike. As in Argo CD, a token sent in the
// Authorization header is not the session being ended.
func (s *Server) logoutToken(w http.ResponseWriter, r *http.Request) {
	defer s.clearSession(w, r)
	token := cookieToken(r, s.maxCookieNumber())
	if token == "" {
		return
	}
	if _, _, err := s.authenticate(cookieOnly(r)); err != nil {
		return // nothing a caller can use
	}
	if err := s.revocations.revoke(r.Context(), token); err != nil {
		s.opts.Log.Error("could not revoke a session token on logout", "error", err.Error())
	}
}

// cookieOnly is r without its Authorization header, so that it is
// authenticated by its cookies.
func cookieOnly(r *http.Request) *http.Request {
	c := r.Clone(r.Context())
	c.Header.Del("Authorization")
	return c
}
