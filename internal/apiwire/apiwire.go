// Package apiwire declares, once, the messages of Argo CD's REST API that
// the API server writes and Capstan's CLI reads, in Argo CD's JSON shape:
// sessions, accounts and their tokens, the lists of certificates and GPG
// keys, and one live object's manifest. Objects of Argo CD's CRDs are the
// api/v1alpha1 types themselves.
package apiwire

import "github.com/capstan-cd/capstan/internal/settings"

// UserInfo is GET /api/v1/session/userinfo's answer.
type UserInfo struct {
	LoggedIn bool     `json:"loggedIn"`
	Username string   `json:"username,omitempty"`
	Issuer   string   `json:"iss,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

// SessionToken answers a login (POST /api/v1/session) and the creation of
// an API key or a project role's token.
type SessionToken struct {
	Token string `json:"token"`
}

// Account is a local account as GET /api/v1/account lists it.
type Account struct {
	Name         string   `json:"name"`
	Enabled      bool     `json:"enabled"`
	Capabilities []string `json:"capabilities"`
	Tokens       []Token  `json:"tokens,omitempty"`
}

// AccountList is GET /api/v1/account's answer.
type AccountList struct {
	Items []Account `json:"items"`
}

// Token is an API key of an account: Argo CD's Token message, whose int64
// times are strings in JSON.
type Token struct {
	ID        string `json:"id"`
	IssuedAt  int64  `json:"issuedAt,string"`
	ExpiresAt int64  `json:"expiresAt,string,omitempty"`
}

// CertificateList is Argo CD's RepositoryCertificateList.
type CertificateList struct {
	Metadata struct{}               `json:"metadata"`
	Items    []settings.Certificate `json:"items"`
}

// GPGKeyList is Argo CD's GnuPGPublicKeyList.
type GPGKeyList struct {
	Metadata struct{}          `json:"metadata"`
	Items    []settings.GPGKey `json:"items"`
}

// GPGKeysCreated answers POST /api/v1/gpgkeys: the keys added and the IDs
// of those already there.
type GPGKeysCreated struct {
	Created GPGKeyList `json:"created"`
	Skipped []string   `json:"skipped"`
}

// ResourceManifest is one live object as a JSON string, the answer of the
// resource calls of an Application.
type ResourceManifest struct {
	Manifest string `json:"manifest"`
}
