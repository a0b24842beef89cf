package server

import (
	"net/http"

	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// The GPG keys API manages the public keys commit signatures are checked
// against (argocd-gpg-keys-cm), as Argo CD's GPGKeyService does. Its RBAC
// resource is "gpgkeys", with no object.
func (s *Server) gpgKeyRoutes() {
	s.mux.HandleFunc("GET /api/v1/gpgkeys", s.api(s.listGPGKeys))
	s.mux.HandleFunc("GET /api/v1/gpgkeys/{keyID}", s.api(s.getGPGKey))
	s.mux.HandleFunc("POST /api/v1/gpgkeys", s.api(s.createGPGKeys))
	s.mux.HandleFunc("DELETE /api/v1/gpgkeys", s.api(s.deleteGPGKey))
}

func (s *Server) listGPGKeys(r *http.Request, c *caller) (any, error) {
	if err := c.may(rbac.ResourceGPGKeys, rbac.ActionGet, ""); err != nil {
		return nil, err
	}
	keys, err := settings.GPGKeys(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	want := settings.GPGKeyID(r.URL.Query().Get("keyID"))
	list := apiwire.GPGKeyList{Items: []settings.GPGKey{}}
	for _, k := range keys {
		if want == "" || k.KeyID == want {
			k.KeyData = ""
			list.Items = append(list.Items, k)
		}
	}
	return list, nil
}

func (s *Server) getGPGKey(r *http.Request, c *caller) (any, error) {
	if err := c.may(rbac.ResourceGPGKeys, rbac.ActionGet, ""); err != nil {
		return nil, err
	}
	id := settings.GPGKeyID(r.PathValue("keyID"))
	if id == "" {
		return nil, badRequest("KeyID is malformed or empty")
	}
	keys, err := settings.GPGKeys(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.KeyID == id {
			return k, nil
		}
	}
	return nil, notFound("no such key: " + id)
}

func (s *Server) createGPGKeys(r *http.Request, c *caller) (any, error) {
	if err := c.may(rbac.ResourceGPGKeys, rbac.ActionCreate, ""); err != nil {
		return nil, err
	}
	var key settings.GPGKey
	if err := decode(r, &key, "GPG public key", false); err != nil {
		return nil, err
	}
	added, skipped, err := settings.AddGPGKeys(r.Context(), s.opts.Client, s.opts.Namespace, key.KeyData)
	if err != nil {
		return nil, err
	}
	return apiwire.GPGKeysCreated{Created: apiwire.GPGKeyList{Items: append([]settings.GPGKey{}, added...)}, Skipped: skipped}, nil
}

func (s *Server) deleteGPGKey(r *http.Request, c *caller) (any, error) {
	if err := c.may(rbac.ResourceGPGKeys, rbac.ActionDelete, ""); err != nil {
		return nil, err
	}
	if err := settings.DeleteGPGKey(r.Context(), s.opts.Client, s.opts.Namespace, r.URL.Query().Get("keyID")); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}
