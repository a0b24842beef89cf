package server

import (
	"net/http"

	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// The certificates API manages the TLS certificates and SSH host keys
// Capstan trusts for repositories (argocd-tls-certs-cm and
// argocd-ssh-known-hosts-cm), as Argo CD's CertificateService does. Its
// RBAC resource is "certificates", with no object.
func (s *Server) certificateRoutes() {
	s.mux.HandleFunc("GET /api/v1/certificates", s.authorized(s.listCertificates))
	s.mux.HandleFunc("POST /api/v1/certificates", s.authorized(s.createCertificates))
	s.mux.HandleFunc("DELETE /api/v1/certificates", s.authorized(s.deleteCertificates))
}

// certificateList is Argo CD's RepositoryCertificateList.
type certificateList struct {
	Metadata struct{}               `json:"metadata"`
	Items    []settings.Certificate `json:"items"`
}

func certSelector(r *http.Request) settings.CertSelector {
	q := r.URL.Query()
	return settings.CertSelector{HostNamePattern: q.Get("hostNamePattern"), CertType: q.Get("certType"), CertSubType: q.Get("certSubType")}
}

func (s *Server) listCertificates(w http.ResponseWriter, r *http.Request, c *caller) {
	if !c.allowedOn(w, rbac.ResourceCertificates, rbac.ActionGet) {
		return
	}
	items, err := settings.Certificates(r.Context(), s.opts.Client, s.opts.Namespace, certSelector(r))
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, certificateList{Items: items})
}

func (s *Server) createCertificates(w http.ResponseWriter, r *http.Request, c *caller) {
	if !c.allowedOn(w, rbac.ResourceCertificates, rbac.ActionCreate) {
		return
	}
	var req certificateList
	if !decodeBody(w, r, &req, "certificate list", false) {
		return
	}
	created, err := settings.AddCertificates(r.Context(), s.opts.Client, s.opts.Namespace, req.Items, r.URL.Query().Get("upsert") == "true")
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, certificateList{Items: append([]settings.Certificate{}, created...)})
}

func (s *Server) deleteCertificates(w http.ResponseWriter, r *http.Request, c *caller) {
	if !c.allowedOn(w, rbac.ResourceCertificates, rbac.ActionDelete) {
		return
	}
	removed, err := settings.RemoveCertificates(r.Context(), s.opts.Client, s.opts.Namespace, certSelector(r))
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, certificateList{Items: removed})
}
