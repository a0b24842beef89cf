package server

import (
	"net/http"

	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// The GPG keys API manages the public keys commit signatures are checked
// against (argocd-gpg-keys-cm), as Argo CD's GPGKeyService does. Its RBAC
// resource is "gpgkeys", with no object.
func (s *Server) gpgKeyRoutes() {
	s.mux.HandleFunc("GET /api/v1/gpgkeys", s.authorized(s.listGPGKeys))
	s.mux.HandleFunc("GET /api/v1/gpgkeys/{keyID}", s.authorized(s.getGPGKey))
	s.mux.HandleFunc("POST /api/v1/gpgkeys", s.authorized(s.createGPGKeys))
	s.mux.HandleFunc("DELETE /api/v1/gpgkeys", s.authorized(s.deleteGPGKey))
}

// gpgKeyList is Argo CD's GnuPGPublicKeyList.
type gpgKeyList struct {
	Metadata struct{}          `json:"metadata"`
	Items    []settings.GPGKey `json:"items"`
}

// allowedOn checks the caller may act on a resource that has no objects
// (certificates, gpgkeys), writing 403 if not.
func (c *caller) allowedOn(w http.ResponseWriter, resource rbac.Resource, action rbac.Action) bool {
	if !c.can(resource, action, "") {
		c.denied(w, resource, action, "")
		return false
	}
	return true
}

func (s *Server) listGPGKeys(w http.ResponseWriter, r *http.Request, c *caller) {
	if !c.allowedOn(w, rbac.ResourceGPGKeys, rbac.ActionGet) {
		return
	}
	keys, err := settings.GPGKeys(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	want := settings.GPGKeyID(r.URL.Query().Get("keyID"))
	list := gpgKeyList{Items: []settings.GPGKey{}}
	for _, k := range keys {
		if want == "" || k.KeyID == want {
			k.KeyData = ""
			list.Items = append(list.Items, k)
		}
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getGPGKey(w http.ResponseWriter, r *http.Request, c *caller) {
	if !c.allowedOn(w, rbac.ResourceGPGKeys, rbac.ActionGet) {
		return
	}
	id := settings.GPGKeyID(r.PathValue("keyID"))
	if id == "" {
		writeError(w, http.StatusBadRequest, "KeyID is malformed or empty")
		return
	}
	keys, err := settings.GPGKeys(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	for _, k := range keys {
		if k.KeyID == id {
			writeJSON(w, http.StatusOK, k)
			return
		}
	}
	writeError(w, http.StatusNotFound, "no such key: "+id)
}

func (s *Server) createGPGKeys(w http.ResponseWriter, r *http.Request, c *caller) {
	if !c.allowedOn(w, rbac.ResourceGPGKeys, rbac.ActionCreate) {
		return
	}
	var key settings.GPGKey
	if !decodeBody(w, r, &key, "GPG public key", false) {
		return
	}
	added, skipped, err := settings.AddGPGKeys(r.Context(), s.opts.Client, s.opts.Namespace, key.KeyData)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"created": gpgKeyList{Items: append([]settings.GPGKey{}, added...)}, "skipped": skipped})
}

func (s *Server) deleteGPGKey(w http.ResponseWriter, r *http.Request, c *caller) {
	if !c.allowedOn(w, rbac.ResourceGPGKeys, rbac.ActionDelete) {
		return
	}
	if err := settings.DeleteGPGKey(r.Context(), s.opts.Client, s.opts.Namespace, r.URL.Query().Get("keyID")); err != nil {
		s.reply(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
