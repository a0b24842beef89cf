package settings

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CMName is the main settings ConfigMap.
const CMName = "argocd-cm"

// Account capabilities, as argocd-cm's accounts.<name> lists them.
const (
	CapabilityLogin  = "login"
	CapabilityAPIKey = "apiKey"
)

// Account is a local account: admin, or one declared in argocd-cm as
// accounts.<name>: apiKey, login (the image updater's account has apiKey only).
type Account struct {
	Name         string
	Enabled      bool
	Capabilities []string
	// PasswordHash is the bcrypt hash from argocd-secret; nil when unset.
	PasswordHash  []byte
	PasswordMtime *time.Time
	// Tokens are the API keys issued to the account, by id.
	Tokens []Token
}

// Can reports whether the account has a capability.
func (a *Account) Can(capability string) bool { return slices.Contains(a.Capabilities, capability) }

// Token records an API key (its jti and times), as argocd-secret's
// accounts.<name>.tokens JSON holds them; the key itself is never stored.
type Token struct {
	ID        string `json:"id"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp,omitempty"`
}

// Accounts reads the local accounts from argocd-cm and argocd-secret in
// namespace. admin always exists (admin.enabled may turn it off) and can
// log in. A malformed entry is an error naming the object and key.
func Accounts(ctx context.Context, r client.Reader, namespace string) (map[string]*Account, error) {
	cm, err := ReadConfigMap(ctx, r, namespace, CMName)
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ServerSecretName}, secret); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Secret/%s/%s: %w", namespace, ServerSecretName, err)
	}
	cmRef, secretRef := "ConfigMap/"+namespace+"/"+CMName, "Secret/"+namespace+"/"+ServerSecretName

	accounts := map[string]*Account{"admin": {Name: "admin", Enabled: true, Capabilities: []string{CapabilityLogin}}}
	if v, ok := cm.Data["admin.enabled"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s: admin.enabled is %q, want true or false", cmRef, v)
		}
		accounts["admin"].Enabled = b
	}
	for key, value := range cm.Data {
		name, ok := strings.CutPrefix(key, "accounts.")
		if !ok || strings.Contains(name, ".") {
			continue
		}
		a := &Account{Name: name, Enabled: true}
		for _, c := range strings.Split(value, ",") {
			switch c = strings.TrimSpace(c); c {
			case "":
			case CapabilityLogin, CapabilityAPIKey:
				a.Capabilities = append(a.Capabilities, c)
			default:
				return nil, fmt.Errorf("%s: %s has unknown capability %q (want apiKey, login)", cmRef, key, c)
			}
		}
		if v, ok := cm.Data[key+".enabled"]; ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s.enabled is %q, want true or false", cmRef, key, v)
			}
			a.Enabled = b
		}
		accounts[name] = a
	}
	for name, a := range accounts {
		prefix := "accounts." + name + "."
		if name == "admin" {
			prefix = "admin."
		}
		if h := secret.Data[prefix+"password"]; len(h) > 0 {
			a.PasswordHash = h
		}
		if m := secret.Data[prefix+"passwordMtime"]; len(m) > 0 {
			t, err := time.Parse(time.RFC3339, string(m))
			if err != nil {
				return nil, fmt.Errorf("%s: %spasswordMtime is not an RFC 3339 time: %w", secretRef, prefix, err)
			}
			a.PasswordMtime = &t
		}
		if raw := secret.Data["accounts."+name+".tokens"]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &a.Tokens); err != nil {
				return nil, fmt.Errorf("%s: accounts.%s.tokens is not a JSON list of tokens: %w", secretRef, name, err)
			}
		}
	}
	return accounts, nil
}

// AddToken records an API key issued to account in argocd-secret.
func AddToken(ctx context.Context, c client.Client, namespace, account string, tok Token) error {
	return updateTokens(ctx, c, namespace, account, func(tokens []Token) ([]Token, error) {
		for _, t := range tokens {
			if t.ID == tok.ID {
				return nil, fmt.Errorf("account %s already has a token with id %s", account, tok.ID)
			}
		}
		return append(tokens, tok), nil
	})
}

// RemoveToken revokes an API key of account by id.
func RemoveToken(ctx context.Context, c client.Client, namespace, account, id string) error {
	return updateTokens(ctx, c, namespace, account, func(tokens []Token) ([]Token, error) {
		i := slices.IndexFunc(tokens, func(t Token) bool { return t.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("account %s has no token with id %s", account, id)
		}
		return slices.Delete(tokens, i, i+1), nil
	})
}

// updateTokens rewrites accounts.<account>.tokens in argocd-secret,
// retrying when someone else wrote the Secret in between.
func updateTokens(ctx context.Context, c client.Client, namespace, account string, change func([]Token) ([]Token, error)) error {
	key := "accounts." + account + ".tokens"
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ServerSecretName}, s); err != nil {
			return fmt.Errorf("reading Secret/%s/%s: %w", namespace, ServerSecretName, err)
		}
		var tokens []Token
		if raw := s.Data[key]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &tokens); err != nil {
				return fmt.Errorf("reading %s of Secret/%s/%s: not a JSON list of tokens: %w", key, namespace, ServerSecretName, err)
			}
		}
		tokens, err := change(tokens)
		if err != nil {
			return err
		}
		sort.SliceStable(tokens, func(i, j int) bool { return tokens[i].IssuedAt < tokens[j].IssuedAt })
		data, err := json.Marshal(tokens)
		if err != nil {
			return err
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[key] = data
		return c.Update(ctx, s)
	})
}

// SetPassword stores a new bcrypt hash for account in argocd-secret and
// the time it changed, which ends the account's earlier sessions.
func SetPassword(ctx context.Context, c client.Client, namespace, account string, hash []byte) error {
	prefix := "accounts." + account + "."
	if account == "admin" {
		prefix = "admin."
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ServerSecretName}, s); err != nil {
			return fmt.Errorf("reading Secret/%s/%s: %w", namespace, ServerSecretName, err)
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[prefix+"password"] = hash
		s.Data[prefix+"passwordMtime"] = []byte(time.Now().UTC().Format(time.RFC3339))
		return c.Update(ctx, s)
	})
}
