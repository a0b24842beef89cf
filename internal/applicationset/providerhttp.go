package applicationset

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset/scm"
)

// maxCABytes bounds a CA bundle read from a ConfigMap or file.
const maxCABytes = 1 << 20

// reach checks a provider's API address against the SCM policy, reads its
// token (tokenRef, "" when unset) and builds the HTTP client it is reached
// with (see providerHTTP), rate-limited per API (see limiterFor; a hosted
// provider's is keyed by field); field names the provider in errors
// ("scmProvider.gitea").
func (g *generation) reach(field, api string, tokenRef *v1alpha1.SecretRef, insecure bool, ca *v1alpha1.ConfigMapKeyRef) (string, *http.Client, error) {
	if err := g.src.SCM.allows(api); err != nil {
		return "", nil, fmt.Errorf("%s: %w", field, err)
	}
	token, err := g.secretRef(tokenRef, field+".tokenRef")
	if err != nil {
		return "", nil, err
	}
	hc, err := g.providerHTTP(insecure, ca, field)
	if err != nil {
		return "", nil, err
	}
	return token, rateLimited(hc, limiterFor(cmp.Or(api, field))), nil
}

// providerHTTP is the HTTP client an SCM or pull request provider is
// reached with: nil (the provider's default) unless the generator skips
// TLS verification (insecure), names a CA bundle in a ConfigMap of the
// ApplicationSet's namespace (caRef), or the controller trusts extra roots
// for SCM providers (SCMPolicy.RootCAPath).
func (g *generation) providerHTTP(insecure bool, ca *v1alpha1.ConfigMapKeyRef, field string) (*http.Client, error) {
	if !insecure && ca == nil && g.src.SCM.RootCAPath == "" {
		return nil, nil
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // asked for by the generator's insecure field
	if ca != nil || g.src.SCM.RootCAPath != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if err := g.addRoots(pool, ca, field); err != nil {
			return nil, err
		}
		tlsConf.RootCAs = pool
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tlsConf
	return &http.Client{Transport: t, Timeout: scm.DefaultTimeout}, nil
}

// addRoots adds the controller's SCM root CAs and the generator's caRef
// bundle to pool.
func (g *generation) addRoots(pool *x509.CertPool, ca *v1alpha1.ConfigMapKeyRef, field string) error {
	if path := g.src.SCM.RootCAPath; path != "" {
		data, err := readBounded(path)
		if err != nil {
			return fmt.Errorf("SCM root CA %s: %w", path, err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return fmt.Errorf("SCM root CA %s holds no PEM certificate", path)
		}
	}
	if ca == nil {
		return nil
	}
	var cm corev1.ConfigMap
	if err := g.src.Reader.Get(g.ctx, client.ObjectKey{Namespace: g.appset.Namespace, Name: ca.ConfigMapName}, &cm); err != nil {
		return fmt.Errorf("%s.caRef: ConfigMap %s/%s: %w", field, g.appset.Namespace, ca.ConfigMapName, err)
	}
	data := cm.Data[ca.Key]
	if len(data) > maxCABytes || !pool.AppendCertsFromPEM([]byte(data)) {
		return fmt.Errorf("%s.caRef: key %q of ConfigMap %s/%s holds no PEM certificate (at most %d bytes)", field, ca.Key, g.appset.Namespace, ca.ConfigMapName, maxCABytes)
	}
	return nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCABytes+1))
	if err == nil && len(data) > maxCABytes {
		err = fmt.Errorf("larger than %d bytes", maxCABytes)
	}
	return data, err
}
