package cli

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/apiclient"
)

// localIssuer is the issuer of the sessions the API server gives local
// accounts, as Argo CD names it; other issuers are SSO providers.
const localIssuer = "argocd"

// tokenClaims are what the CLI reads of a session token, unverified: the
// server checks tokens; the CLI only needs to know whose session it holds
// and until when.
type tokenClaims struct {
	Subject   string `json:"sub"`
	Issuer    string `json:"iss"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
	Federated struct {
		UserID string `json:"user_id"`
	} `json:"federated_claims"`
}

// readClaims decodes a session token's claims.
func readClaims(token string) (tokenClaims, error) {
	var c tokenClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, errors.New("the context's token is not a JWT: run capstan relogin")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err == nil {
		err = json.Unmarshal(payload, &c)
	}
	if err != nil {
		return c, fmt.Errorf("the context's token: %w", err)
	}
	return c, nil
}

// local reports whether the session is a local account's.
func (c tokenClaims) local() bool { return c.Issuer == "" || c.Issuer == localIssuer }

// username is the account the session is for: the SSO user's id, else
// the subject without its ":<purpose>" suffix, as Argo CD's CLI shows it.
func (c tokenClaims) username() string {
	name, _, _ := strings.Cut(cmp.Or(c.Federated.UserID, c.Subject), ":")
	return name
}

// expired reports whether the session ended before now.
func (c tokenClaims) expired(now time.Time) bool {
	return c.ExpiresAt != 0 && !now.Before(time.Unix(c.ExpiresAt, 0))
}

func newAccountSessionTokenCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "session-token",
		Short: "Print the current context's session token (for scripts: ARGOCD_AUTH_TOKEN)",
		Example: "  capstan account session-token\n  capstan account session-token -o json\n" +
			"  export ARGOCD_AUTH_TOKEN=$(capstan account session-token)",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return fmt.Errorf("--output %q: use json, or leave it out for the token alone", output)
			}
			cfg, err := apiclient.Load(f.config)
			if err != nil {
				return err
			}
			_, token, err := cfg.Context(f.context)
			if err != nil {
				return err
			}
			if token == "" {
				return errors.New("no session token: log in first with capstan login")
			}
			claims, err := readClaims(token)
			if err != nil {
				return err
			}
			if claims.expired(time.Now()) {
				return errors.New("the session token has expired: run capstan relogin")
			}
			if output == "" {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), token)
				return err
			}
			return writeSessionInfo(cmd, token, claims)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json (the token with its user, issuer and times)")
	return cmd
}

// writeSessionInfo prints the session as Argo CD's session-token -o json.
func writeSessionInfo(cmd *cobra.Command, token string, c tokenClaims) error {
	info := map[string]any{"type": "local", "issuer": c.Issuer, "username": c.username(), "token": token,
		// Capstan's CLI keeps no refresh token: an SSO session ends with relogin.
		"has_refresh_token": false}
	if !c.local() {
		info["type"] = "sso"
	}
	for key, at := range map[string]int64{"issued_at": c.IssuedAt, "expires_at": c.ExpiresAt} {
		if at != 0 {
			info[key] = time.Unix(at, 0).UTC().Format(time.RFC3339)
		}
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), string(data))
	return err
}
