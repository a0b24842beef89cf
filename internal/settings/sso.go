package settings

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// partOfLabel marks the Secrets argocd-cm may reference as
// $<secret>:<key>, as Argo CD requires.
const partOfLabel = "app.kubernetes.io/part-of"

// OIDCConfig is argocd-cm's oidc.config: an OpenID Connect provider the
// API server sends users to directly.
type OIDCConfig struct {
	Name         string `json:"name"`
	Issuer       string `json:"issuer"`
	ClientID     string `json:"clientID"`
	ClientSecret string `json:"clientSecret"`
	// CLIClientID is the public client the CLI's --sso login uses
	// (default: ClientID).
	CLIClientID     string   `json:"cliClientID,omitempty"`
	RequestedScopes []string `json:"requestedScopes,omitempty"`
	// RequestedIDTokenClaims are sent as the "claims" request parameter.
	RequestedIDTokenClaims map[string]*IDTokenClaim `json:"requestedIDTokenClaims,omitempty"`
	LogoutURL              string                   `json:"logoutURL,omitempty"`
	// RootCA are PEM certificates trusted for the provider's TLS.
	RootCA string `json:"rootCA,omitempty"`
}

// IDTokenClaim asks the provider for one claim in the ID token.
type IDTokenClaim struct {
	Essential bool     `json:"essential,omitempty"`
	Value     string   `json:"value,omitempty"`
	Values    []string `json:"values,omitempty"`
}

// Scopes are the requested scopes, Argo CD's default when unset.
func (o *OIDCConfig) Scopes() []string {
	if len(o.RequestedScopes) > 0 {
		return o.RequestedScopes
	}
	return []string{"openid", "profile", "email", "groups"}
}

// SSO is the single sign-on part of argocd-cm.
type SSO struct {
	// URL is Capstan's external URL (argocd-cm url); callbacks go under it.
	URL string
	// AdditionalURLs are argocd-cm's additionalUrls: other external URLs,
	// whose own callbacks serve browsers that came through them.
	AdditionalURLs []string
	// OIDC is nil when no OIDC provider is configured.
	OIDC *OIDCConfig
	// Dex is true when OIDC is the bundled Dex of dex.config, reached
	// through the API server at DexPath.
	Dex bool
	// DexConnectorID is dex.auth.connectorId: with the bundled Dex, the
	// connector logins go straight to, without Dex's choice of connectors.
	// Default none.
	DexConnectorID string
	// InsecureSkipVerify is oidc.tls.insecure.skip.verify: the external
	// provider's TLS certificate is not checked. Default false.
	InsecureSkipVerify bool
}

// LoadSSO reads url and oidc.config from argocd-cm, replacing $<key> and
// $<secret>:<key> references in the client secret with Secret values.
// Without oidc.config, a dex.config (with url) makes the provider the
// bundled Dex: issuer url + /api/dex, clients argo-cd and argo-cd-cli.
func LoadSSO(ctx context.Context, c client.Reader, namespace string) (*SSO, error) {
	cm, err := ReadConfigMap(ctx, c, namespace, CMName)
	if err != nil {
		return nil, err
	}
	sso := &SSO{URL: strings.TrimSuffix(cm.Data["url"], "/"), AdditionalURLs: (&ArgoCD{Data: cm.Data}).AdditionalURLs(),
		InsecureSkipVerify: cm.Data["oidc.tls.insecure.skip.verify"] == "true", DexConnectorID: strings.TrimSpace(cm.Data["dex.auth.connectorId"])}
	raw := cm.Data["oidc.config"]
	if strings.TrimSpace(raw) == "" {
		if sso.URL == "" || strings.TrimSpace(cm.Data["dex.config"]) == "" {
			return sso, nil
		}
		key, err := serverKey(ctx, c, namespace)
		if err != nil {
			return nil, err
		}
		sso.Dex = true
		sso.OIDC = &OIDCConfig{Name: "Dex", Issuer: sso.URL + DexPath, ClientID: DexClientID, ClientSecret: DexClientSecret(key), CLIClientID: DexCLIClientID}
		return sso, nil
	}
	cfg := &OIDCConfig{}
	if err := yaml.Unmarshal([]byte(raw), cfg); err != nil {
		return nil, fmt.Errorf("ConfigMap/%s/%s: oidc.config: %w", namespace, CMName, err)
	}
	if cfg.Issuer == "" || cfg.ClientID == "" {
		return nil, fmt.Errorf("ConfigMap/%s/%s: oidc.config needs issuer and clientID", namespace, CMName)
	}
	secret, err := ResolveSecretRef(ctx, c, namespace, cfg.ClientSecret)
	if err != nil {
		return nil, fmt.Errorf("oidc.config clientSecret: %w", err)
	}
	cfg.ClientSecret = secret
	sso.OIDC = cfg
	return sso, nil
}

// ResolveSecretRef returns value, or for "$key" the key of argocd-secret
// and for "$name:key" the key of Secret name, which must be labelled
// app.kubernetes.io/part-of: argocd so settings cannot read any Secret.
func ResolveSecretRef(ctx context.Context, c client.Reader, namespace, value string) (string, error) {
	v, found, err := lookupSecretRef(ctx, c, namespace, value)
	if err != nil {
		return "", err
	}
	if !found {
		name, key := splitSecretRef(value)
		return "", fmt.Errorf("%s: Secret/%s/%s has no key %s", value, namespace, name, key)
	}
	return v, nil
}

// splitSecretRef splits a $key or $name:key reference.
func splitSecretRef(value string) (name, key string) {
	ref := strings.TrimPrefix(value, "$")
	if n, k, found := strings.Cut(ref, ":"); found {
		return n, k
	}
	return ServerSecretName, ref
}

// lookupSecretRef is ResolveSecretRef that reports a Secret or key that
// is not there as not found rather than as an error.
func lookupSecretRef(ctx context.Context, c client.Reader, namespace, value string) (string, bool, error) {
	if !strings.HasPrefix(value, "$") {
		return value, true, nil
	}
	name, key := splitSecretRef(value)
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); apierrors.IsNotFound(err) {
		return "", false, nil
	} else if err != nil {
		return "", false, fmt.Errorf("reading Secret/%s/%s for %s: %w", namespace, name, value, err)
	}
	if name != ServerSecretName && s.Labels[partOfLabel] != "argocd" {
		return "", false, fmt.Errorf("%s cannot refer to Secret/%s/%s: it is not labelled %s: argocd", value, namespace, name, partOfLabel)
	}
	v, ok := s.Data[key]
	return string(v), ok, nil
}

// URLFor is the external URL a request came through: the first of url and
// additionalUrls with the request's host whose path the request is under,
// or url when none is. Only configured URLs are returned, never one the
// request names.
func (s *SSO) URLFor(host, path string) string {
	for _, candidate := range append([]string{s.URL}, s.AdditionalURLs...) {
		u, err := url.Parse(candidate)
		if err != nil || u.Host == "" {
			continue
		}
		if strings.EqualFold(u.Host, host) && strings.HasPrefix(path, u.Path) {
			return candidate
		}
	}
	return s.URL
}
