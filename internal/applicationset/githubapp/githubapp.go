// Package githubapp authenticates the ApplicationSet generators' GitHub
// calls as a GitHub App installation, as Argo CD's appSecretName does:
// the app's private key signs a short-lived JWT, which buys an
// installation token (ghinstallation does both, renewing the token before
// it expires); when the credentials name no installation, the app's
// installation on the organization is looked up first.
package githubapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v88/github"
)

// DefaultTimeout bounds one call when the caller's client sets none.
const DefaultTimeout = 30 * time.Second

// App is a GitHub App's credentials.
type App struct {
	// ID is the app's ID; required.
	ID int64
	// InstallationID is the installation to act as. Zero: the app's
	// installation on the organization, looked up.
	InstallationID int64
	// PrivateKey is the app's PEM private key; required.
	PrivateKey []byte
	// EnterpriseBaseURL is the GitHub Enterprise API the credentials are
	// for, used when the generator names no API. Default: api.github.com.
	EnterpriseBaseURL string
}

// Client returns an HTTP client whose requests carry the app's
// installation token. api is the GitHub API's address ("" for the app's
// EnterpriseBaseURL, else api.github.com), org the organization (or user)
// whose installation is looked up when the app names none; hc's transport
// and timeout are kept (nil: the default transport and DefaultTimeout).
func Client(ctx context.Context, app App, api, org string, hc *http.Client) (*http.Client, error) {
	if app.ID <= 0 || len(app.PrivateKey) == 0 {
		return nil, errors.New("a GitHub App needs its ID and private key")
	}
	if api == "" {
		api = app.EnterpriseBaseURL
	}
	base := http.RoundTripper(http.DefaultTransport)
	timeout := DefaultTimeout
	if hc != nil {
		if hc.Transport != nil {
			base = hc.Transport
		}
		if hc.Timeout > 0 {
			timeout = hc.Timeout
		}
	}
	installation := app.InstallationID
	if installation == 0 {
		id, err := lookup(ctx, app, api, org, base, timeout)
		if err != nil {
			return nil, err
		}
		installation = id
	}
	itr, err := ghinstallation.New(base, app.ID, installation, app.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("GitHub App %d: %w", app.ID, err)
	}
	if api != "" {
		itr.BaseURL = strings.TrimSuffix(api, "/")
	}
	return &http.Client{Transport: itr, Timeout: timeout}, nil
}

// lookup finds the app's installation on org (an organization, else a
// user).
func lookup(ctx context.Context, app App, api, org string, base http.RoundTripper, timeout time.Duration) (int64, error) {
	atr, err := ghinstallation.NewAppsTransport(base, app.ID, app.PrivateKey)
	if err != nil {
		return 0, fmt.Errorf("GitHub App %d: %w", app.ID, err)
	}
	opts := []github.ClientOptionsFunc{github.WithHTTPClient(&http.Client{Transport: atr, Timeout: timeout})}
	if api != "" {
		atr.BaseURL = strings.TrimSuffix(api, "/")
		u := strings.TrimSuffix(api, "/") + "/"
		opts = append(opts, github.WithURLs(&u, &u))
	}
	c, err := github.NewClient(opts...)
	if err != nil {
		return 0, fmt.Errorf("GitHub App %d: API %s: %w", app.ID, api, err)
	}
	inst, _, err := c.Apps.GetOrganizationInstallation(ctx, org)
	var gerr *github.ErrorResponse
	if errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == http.StatusNotFound {
		inst, _, err = c.Apps.GetUserInstallation(ctx, org)
	}
	if err != nil {
		return 0, fmt.Errorf("GitHub App %d: finding its installation on %s: %w", app.ID, org, err)
	}
	return inst.GetID(), nil
}
