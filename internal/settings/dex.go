package settings

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Dex, the identity broker argocd-cm's dex.config configures, is reached
// under the API server's URL at DexPath and knows the API server and the
// CLI as these clients, as Argo CD registers them.
const (
	DexPath        = "/api/dex"
	DexClientID    = "argo-cd"
	DexCLIClientID = "argo-cd-cli"
	// dexCallbackPath is where connectors send the browser back to Dex.
	dexCallbackPath = DexPath + "/callback"
)

// DexClientSecret is the argo-cd client's secret: derived from the server
// key (argocd-secret's server.secretkey) as Argo CD derives it, so the API
// server and Dex agree on it without sharing a Secret.
func DexClientSecret(serverKey []byte) string {
	sum := sha256.Sum256(serverKey)
	return base64.URLEncoding.EncodeToString(sum[:])[:40]
}

// DexServe says where and how Dex serves.
type DexServe struct {
	// Address is the host Dex listens on, with Argo CD's ports: web 5556,
	// gRPC 5557, telemetry 5558. Default 0.0.0.0.
	Address string
	// TLSCert and TLSKey are files Dex serves HTTPS with. Empty: plain HTTP.
	TLSCert, TLSKey string
}

// listen is Dex's address on port.
func (d DexServe) listen(port string) string {
	host := d.Address
	if host == "" {
		host = "0.0.0.0"
	}
	return net.JoinHostPort(host, port)
}

// connectorsWithRedirect are the Dex connector types that send the
// browser back to Dex, whose redirectURI Argo CD fills in.
var connectorsWithRedirect = map[string]bool{
	"oidc": true, "saml": true, "microsoft": true, "linkedin": true, "gitlab": true, "github": true,
	"bitbucket-cloud": true, "openshift": true, "gitea": true, "google": true, "oauth": true,
}

// DexConfig returns the configuration Dex runs with for argocd-cm's
// dex.config, or nil when Dex is not configured (no url or no dex.config):
// the user's configuration with Argo CD's issuer (url + /api/dex), memory
// storage, serve's addresses, the argo-cd and argo-cd-cli clients first
// among the static clients, each connector's redirect URI, and $key and
// $secret:key values replaced from Secrets.
func DexConfig(ctx context.Context, c client.Reader, namespace string, serve DexServe) ([]byte, error) {
	cm, err := ReadConfigMap(ctx, c, namespace, CMName)
	if err != nil {
		return nil, err
	}
	url := strings.TrimSuffix(cm.Data["url"], "/")
	raw := cm.Data["dex.config"]
	if url == "" || strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	ref := "ConfigMap/" + namespace + "/" + CMName + ": dex.config"
	cfg := map[string]any{}
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	key, err := serverKey(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	cfg["issuer"] = url + DexPath
	cfg["storage"] = map[string]any{"type": "memory"}
	cfg["web"] = map[string]any{"http": serve.listen("5556")}
	if serve.TLSCert != "" {
		cfg["web"] = map[string]any{"https": serve.listen("5556"), "tlsCert": serve.TLSCert, "tlsKey": serve.TLSKey}
	}
	cfg["grpc"] = map[string]any{"addr": serve.listen("5557")}
	cfg["telemetry"] = map[string]any{"http": serve.listen("5558")}
	oauth2, _ := cfg["oauth2"].(map[string]any)
	if oauth2 == nil {
		oauth2 = map[string]any{}
	}
	if _, set := oauth2["skipApprovalScreen"]; !set {
		oauth2["skipApprovalScreen"] = true
	}
	cfg["oauth2"] = oauth2
	addArgoClients(cfg, append([]string{url}, (&ArgoCD{Data: cm.Data}).AdditionalURLs()...), key)
	if err := setConnectorRedirects(cfg, url); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	resolved, err := resolveSecretRefs(ctx, c, namespace, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return yaml.Marshal(resolved)
}

// addArgoClients puts the API server's and the CLI's clients ahead of
// the user's static clients. The API server's may send browsers back under
// each of its URLs (url, then additionalUrls).
func addArgoClients(cfg map[string]any, urls []string, serverKey []byte) {
	callbacks := make([]any, 0, len(urls))
	for _, u := range urls {
		callbacks = append(callbacks, u+"/auth/callback")
	}
	clients := []any{
		map[string]any{"id": DexClientID, "name": "Argo CD", "secret": DexClientSecret(serverKey), "redirectURIs": callbacks},
		map[string]any{"id": DexCLIClientID, "name": "Argo CD CLI", "public": true, "redirectURIs": []any{"http://localhost", "http://localhost:8085/auth/callback"}},
	}
	if theirs, ok := cfg["staticClients"].([]any); ok {
		clients = append(clients, theirs...)
	}
	cfg["staticClients"] = clients
}

// setConnectorRedirects points the connectors that send the browser back
// at Dex's callback under url.
func setConnectorRedirects(cfg map[string]any, url string) error {
	connectors, ok := cfg["connectors"].([]any)
	if !ok || len(connectors) == 0 {
		return errors.New("no connectors")
	}
	for i, raw := range connectors {
		conn, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("connector %d is not a mapping", i)
		}
		typ, _ := conn["type"].(string)
		if !connectorsWithRedirect[typ] {
			continue
		}
		config, ok := conn["config"].(map[string]any)
		if !ok {
			return fmt.Errorf("connector %d (%s) has no config", i, typ)
		}
		config["redirectURI"] = url + dexCallbackPath
	}
	return nil
}

// serverKey is argocd-secret's server.secretkey.
func serverKey(ctx context.Context, c client.Reader, namespace string) ([]byte, error) {
	key, err := ResolveSecretRef(ctx, c, namespace, "$"+keySecretKey)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, errors.New("argocd-secret has no server.secretkey yet (the API server writes it at its first start)")
	}
	return []byte(key), nil
}

// resolveSecretRefs replaces, anywhere in v, strings that are $key or
// $secret:key references with the Secrets' values. A string that names no
// Secret key (a bcrypt hash starts with $ too) stays as it is, as in Argo
// CD.
func resolveSecretRefs(ctx context.Context, c client.Reader, namespace string, v any) (any, error) {
	switch v := v.(type) {
	case string:
		resolved, found, err := lookupSecretRef(ctx, c, namespace, v)
		if err != nil || !found {
			return v, err
		}
		return resolved, nil
	case map[string]any:
		for k, item := range v {
			r, err := resolveSecretRefs(ctx, c, namespace, item)
			if err != nil {
				return nil, err
			}
			v[k] = r
		}
	case []any:
		for i, item := range v {
			r, err := resolveSecretRefs(ctx, c, namespace, item)
			if err != nil {
				return nil, err
			}
			v[i] = r
		}
	}
	return v, nil
}
