// Package githubapp authenticates calls to GitHub as a GitHub App
// installation, as Argo CD does for the ApplicationSet generators'
// appSecretName and for repositories whose credentials are a GitHub App:
// the app's private key signs a short-lived JWT, which buys an
// installation token (ghinstallation does both, renewing the token before
// it expires); when the credentials name no installation, the app's
// installation on the organization is looked up first.
package githubapp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
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

// installations are the installation transports Token has made, by app,
// installation, API and key: each keeps its token until it nears expiry,
// so a token is bought once an hour, not once a fetch.
var installations sync.Map

type installationKey struct {
	app, installation int64
	api               string
	key               [sha256.Size]byte
}

// Token returns an installation token of app, whose InstallationID must be
// set, for git over HTTPS (user "x-access-token"). Tokens are cached per
// app and installation and renewed before they expire; a call is bounded
// by DefaultTimeout.
func Token(ctx context.Context, app App) (string, error) {
	if app.ID <= 0 || app.InstallationID <= 0 || len(app.PrivateKey) == 0 {
		return "", errors.New("a GitHub App's credentials need its ID, installation ID and private key")
	}
	key := installationKey{app.ID, app.InstallationID, strings.TrimSuffix(app.EnterpriseBaseURL, "/"), sha256.Sum256(app.PrivateKey)}
	itr, ok := installations.Load(key)
	if !ok {
		t, err := ghinstallation.New(http.DefaultTransport, app.ID, app.InstallationID, app.PrivateKey)
		if err != nil {
			return "", fmt.Errorf("GitHub App %d: %w", app.ID, err)
		}
		if key.api != "" {
			t.BaseURL = key.api
		}
		itr, _ = installations.LoadOrStore(key, t)
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	token, err := itr.(*ghinstallation.Transport).Token(ctx)
	if err != nil {
		return "", fmt.Errorf("GitHub App %d, installation %d: %w", app.ID, app.InstallationID, err)
	}
	return token, nil
}
