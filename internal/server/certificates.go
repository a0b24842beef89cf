package server

import (
	"net/http"

	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// The certificates API manages the TLS certificates and SSH host keys
// Capstan trusts for repositories (argocd-tls-certs-cm and
// argocd-ssh-known-hosts-cm), as Argo CD's CertificateService does. Its
// RBAC resource is "certificates", with no object.
func (s *Server) certificateRoutes() {
	s.mux.HandleFunc("GET /api/v1/certificates", s.api(s.listCertificates))
	s.mux.HandleFunc("POST /api/v1/certificates", s.api(s.createCertificates))
	s.mux.HandleFunc("DELETE /api/v1/certificates", s.api(s.deleteCertificates))
}

func certSelector(r *http.Request) settings.CertSelector {
	q := r.URL.Query()
	return settings.CertSelector{HostNamePattern: q.Get("hostNamePattern"), CertType: q.Get("certType"), CertSubType: q.Get("certSubType")}
}

func (s *Server) listCertificates(r *http.Request, c *caller) (any, error) {
	if err := c.may(rbac.ResourceCertificates, rbac.ActionGet, ""); err != nil {
		return nil, err
	}
	items, err := settings.Certificates(r.Context(), s.opts.Client, s.opts.Namespace, certSelector(r))
	if err != nil {
		return nil, err
	}
	return apiwire.CertificateList{Items: items}, nil
}

func (s *Server) createCertificates(r *http.Request, c *caller) (any, error) {
	if err := c.may(rbac.ResourceCertificates, rbac.ActionCreate, ""); err != nil {
		return nil, err
	}
	var req apiwire.CertificateList
	if err := decode(r, &req, "certificate list", false); err != nil {
		return nil, err
	}
	created, err := settings.AddCertificates(r.Context(), s.opts.Client, s.opts.Namespace, req.Items, r.URL.Query().Get("upsert") == "true")
	if err != nil {
		return nil, err
	}
	return apiwire.CertificateList{Items: append([]settings.Certificate{}, created...)}, nil
}

func (s *Server) deleteCertificates(r *http.Request, c *caller) (any, error) {
	if err := c.may(rbac.ResourceCertificates, rbac.ActionDelete, ""); err != nil {
		return nil, err
	}
	removed, err := settings.RemoveCertificates(r.Context(), s.opts.Client, s.opts.Namespace, certSelector(r))
	if err != nil {
		return nil, err
	}
	return apiwire.CertificateList{Items: removed}, nil
}
