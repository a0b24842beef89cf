package cloudauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// armScope is the scope of the token an Azure Container Registry takes in
// exchange for its own, unless AZURE_ARM_TOKEN_RESOURCE names another
// resource (a sovereign cloud's).
func armScope() string {
	resource := "https://management.core.windows.net"
	if v := os.Getenv("AZURE_ARM_TOKEN_RESOURCE"); v != "" {
		resource = v
	}
	return strings.TrimSuffix(resource, "/") + "/.default"
}

// refreshToken is a registry's refresh token and when to stop using it.
type refreshToken struct {
	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// renewBefore is how long before its expiry a refresh token is renewed.
const renewBefore = 5 * time.Minute

// AzureContainerRegistry returns a refresh token of the Azure Container
// Registry at host (as myregistry.azurecr.io), bought with the pod's Azure
// identity (see AzureWorkloadIdentity), for Helm to send with the user
// name AzureEmptyUser. The registry's challenge names where to exchange
// the identity's token; an exchange on another host than the registry's is
// refused, so the token goes nowhere else.
func (s *Source) AzureContainerRegistry(ctx context.Context, host string) (string, error) {
	cached, _ := remember(s, "acr\x00"+host, func() (*refreshToken, error) { return &refreshToken{}, nil })
	cached.mu.Lock()
	defer cached.mu.Unlock()
	if cached.token != "" && time.Now().Before(cached.renewAt) {
		return cached.token, nil
	}
	token, err := s.exchangeACR(ctx, host)
	if err != nil {
		return "", fmt.Errorf("getting a token of the Azure Container Registry %s: %w", host, err)
	}
	cached.token, cached.renewAt = "", time.Time{}
	if exp, ok := jwtExpiry(token); ok {
		cached.token, cached.renewAt = token, exp.Add(-renewBefore)
	}
	return token, nil
}

// exchangeACR asks the registry for its challenge, then trades the
// identity's token for the registry's refresh token.
func (s *Source) exchangeACR(ctx context.Context, host string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	realm, service, err := s.challenge(ctx, host)
	if err != nil {
		return "", err
	}
	identity, err := s.AzureWorkloadIdentity(ctx, armScope())
	if err != nil {
		return "", err
	}
	exchange := url.URL{Scheme: "https", Host: realm.Host, Path: "/oauth2/exchange"}
	form := url.Values{"grant_type": {"access_token"}, "service": {service}, "access_token": {identity}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, exchange.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("exchanging the Azure token: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("exchanging the Azure token: the registry answered %s", resp.Status)
	}
	body, err := readBody(resp.Body)
	if err != nil {
		return "", fmt.Errorf("exchanging the Azure token: %w", err)
	}
	var answer struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.RefreshToken == "" {
		return "", errors.New("exchanging the Azure token: the registry's answer holds no refresh_token")
	}
	return answer.RefreshToken, nil
}

// challenge reads the registry's Bearer challenge: the realm (on the
// registry's own host) and the service to ask a token for.
func (s *Source) challenge(ctx context.Context, host string) (*url.URL, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, (&url.URL{Scheme: "https", Host: host, Path: "/v2/"}).String(), http.NoBody)
	if err != nil {
		return nil, "", err
	}
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("asking for the registry's challenge: %w", err)
	}
	resp.Body.Close()
	header := resp.Header.Get("WWW-Authenticate")
	scheme, params, _ := strings.Cut(header, " ")
	if resp.StatusCode != http.StatusUnauthorized || !strings.EqualFold(scheme, "bearer") {
		return nil, "", fmt.Errorf("the registry answered %s without a Bearer challenge", resp.Status)
	}
	values := challengeParams(params)
	realm, err := url.Parse(values["realm"])
	if err != nil || realm.Scheme != "https" || values["service"] == "" {
		return nil, "", errors.New("the registry's challenge names no https realm and service")
	}
	if !strings.EqualFold(realm.Host, host) {
		return nil, "", fmt.Errorf("the registry's challenge sends tokens to %s, not to the registry", realm.Host)
	}
	return realm, values["service"], nil
}

// challengeParams splits a challenge's key="value" parameters.
func challengeParams(params string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(params, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok {
			out[strings.ToLower(key)] = strings.Trim(value, `"`)
		}
	}
	return out
}

// jwtExpiry reads a JWT's exp claim, without checking its signature (the
// token is only kept until then).
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return time.Time{}, false
	}
	exp, err := claims.Exp.Int64()
	if err != nil || exp <= 0 {
		return time.Time{}, false
	}
	return time.Unix(exp, 0), true
}
