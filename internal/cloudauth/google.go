package cloudauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// GoogleScope is the scope of the tokens a service account key buys, as
// Argo CD asks for them.
const GoogleScope = "https://www.googleapis.com/auth/cloud-platform"

// maxKeySize bounds a service account key.
const maxKeySize = 64 << 10

// googleAccount is a service account's e-mail and its token source.
type googleAccount struct {
	email  string
	tokens oauth2.TokenSource
}

// Google returns the e-mail of the service account whose key (JSON) is
// given and an access token the key buys, as Git sends them to Google
// Cloud Source Repositories (basic auth). Only service account keys are
// taken: other Google credential files (external accounts, user
// credentials) can make the caller read files or run programs, and are
// refused.
func (s *Source) Google(ctx context.Context, keyJSON string) (email, token string, err error) {
	if len(keyJSON) > maxKeySize {
		return "", "", fmt.Errorf("the Google service account key is larger than %d bytes", maxKeySize)
	}
	account, err := remember(s, "google\x00"+keyJSON, func() (googleAccount, error) {
		config, err := google.JWTConfigFromJSON([]byte(keyJSON), GoogleScope)
		if err != nil {
			return googleAccount{}, fmt.Errorf("reading the Google service account key: %w", err)
		}
		if u, err := url.Parse(config.TokenURL); err != nil || u.Scheme != "https" {
			return googleAccount{}, errors.New("the Google service account key's token_uri is not an https URL")
		}
		client := *s.opts.HTTPClient
		client.Timeout = s.opts.Timeout
		// The token source outlives the request that built it: it gets a
		// context of its own that carries only the HTTP client.
		tokens := config.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, &client))
		return googleAccount{email: config.Email, tokens: tokens}, nil
	})
	if err != nil {
		return "", "", err
	}
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	t, err := account.tokens.Token()
	if err != nil {
		return "", "", fmt.Errorf("getting a Google access token for %s: %w", account.email, tokenError(err))
	}
	return account.email, t.AccessToken, nil
}

// tokenError keeps of an OAuth2 token endpoint's refusal its status and
// error code, not its body: the endpoint is named by the credentials, and
// what it answers is not shown back.
func tokenError(err error) error {
	var retrieve *oauth2.RetrieveError
	if errors.As(err, &retrieve) && retrieve.Response != nil {
		if retrieve.ErrorCode != "" {
			return fmt.Errorf("the token endpoint answered %s (%s)", retrieve.Response.Status, retrieve.ErrorCode)
		}
		return fmt.Errorf("the token endpoint answered %s", retrieve.Response.Status)
	}
	return err
}
