// Package apiwire declares, once, the messages of Argo CD's REST API that
// the API server writes and Capstan's CLI reads, in Argo CD's JSON shape:
// sessions, accounts and their tokens, the lists of certificates and GPG
// keys, clusters with their state, and one live object's manifest. Objects of Argo CD's CRDs are the
// api/v1alpha1 types themselves.
package apiwire

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/settings"
)

// ConnectionState is a repository's or cluster's last connection
// attempt: Successful, Failed (Message says why) or Unknown.
type ConnectionState struct {
	Status      string       `json:"status"`
	Message     string       `json:"message,omitempty"`
	AttemptedAt *metav1.Time `json:"attemptedAt,omitempty"`
}

// Cluster is a cluster as the cluster API shows it: its spec without
// credentials, and what is known of its state (also under the fields
// Argo CD keeps for older clients).
type Cluster struct {
	cluster.Spec
	ServerVersion   string          `json:"serverVersion,omitempty"`
	ConnectionState ConnectionState `json:"connectionState"`
	Info            ClusterInfo     `json:"info"`
}

// ClusterInfo is Argo CD's ClusterInfo, as far as the API server knows it:
// the version and connection its last request found, and how many
// Applications deploy to the cluster.
type ClusterInfo struct {
	ConnectionState   ConnectionState `json:"connectionState"`
	ServerVersion     string          `json:"serverVersion,omitempty"`
	ApplicationsCount int             `json:"applicationsCount"`
}

// ClusterList is GET /api/v1/clusters' answer.
type ClusterList struct {
	Items []Cluster `json:"items"`
}

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
