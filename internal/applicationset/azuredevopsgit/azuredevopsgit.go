// Package azuredevopsgit connects the ApplicationSet generators to an
// Azure DevOps organization's git service through azure-devops-go-api,
// on an HTTP client of the caller's (the library's own clients have no
// timeout), finding the service's address once per connection.
package azuredevopsgit

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
)

// DefaultAPI is Azure DevOps Services; organizations answer under it.
const DefaultAPI = "https://dev.azure.com"

// Conn is a connection to one organization's git service, safe for
// concurrent use; its git client is built on the first call to Git.
type Conn struct {
	conn *azuredevops.Connection
	hc   *http.Client

	mu     sync.Mutex
	client git.Client
}

// New returns the connection to organization at api (empty: DefaultAPI)
// with a personal access token (empty: anonymous), calling through hc.
func New(api, organization, token string, hc *http.Client) *Conn {
	if api == "" {
		api = DefaultAPI
	}
	base := strings.TrimSuffix(api, "/") + "/" + organization
	conn := azuredevops.NewAnonymousConnection(base)
	if token != "" {
		conn = azuredevops.NewPatConnection(base, token)
	}
	return &Conn{conn: conn, hc: hc}
}

// Git returns the git client. The organization's resource areas give the
// git service's address, as git.NewClient finds it; Azure DevOps Server
// lists none and serves git at the organization's base.
func (c *Conn) Git(ctx context.Context) (git.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	areas, err := c.at(c.conn.BaseUrl).GetResourceAreas(ctx)
	if err != nil {
		return nil, err
	}
	url := c.conn.BaseUrl
	if areas != nil && len(*areas) > 0 {
		i := slices.IndexFunc(*areas, func(r azuredevops.ResourceAreaInfo) bool { return r.Id != nil && *r.Id == git.ResourceAreaId })
		if i < 0 || (*areas)[i].LocationUrl == nil {
			return nil, errors.New("the organization lists no git resource area")
		}
		url = *(*areas)[i].LocationUrl
	}
	c.client = &git.ClientImpl{Client: *c.at(strings.TrimSuffix(url, "/"))}
	return c.client, nil
}

// at is the library's client of the service at url, on c's HTTP client.
func (c *Conn) at(url string) *azuredevops.Client {
	return azuredevops.NewClientWithOptions(c.conn, url, azuredevops.WithHTTPClient(c.hc))
}

// TypeKey is the type key of an Azure DevOps error ("" for any other
// error), such as GitRepositoryNotFoundException. The library returns its
// error both as a value and as a pointer.
func TypeKey(err error) string {
	var v azuredevops.WrappedError
	if errors.As(err, &v) && v.TypeKey != nil {
		return *v.TypeKey
	}
	var p *azuredevops.WrappedError
	if errors.As(err, &p) && p != nil && p.TypeKey != nil {
		return *p.TypeKey
	}
	return ""
}
