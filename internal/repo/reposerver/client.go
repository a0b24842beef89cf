package reposerver

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/chartrepo"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
	"github.com/capstan-cd/capstan/internal/tracing"
)

// Client is a repo.Server that calls a remote repo server.
type Client struct {
	conn *grpc.ClientConn
}

var _ repo.Server = (*Client)(nil)

// Dial connects to a repo server at addr (host:port) as t says.
func Dial(addr string, t ClientTLS, opts ...grpc.DialOption) (*Client, error) {
	creds, err := t.credentials()
	if err != nil {
		return nil, fmt.Errorf("repo server %s: %w", addr, err)
	}
	if tracing.Enabled() {
		opts = append(opts, grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
	}
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.CallContentSubtype(codecName), grpc.MaxCallRecvMsgSize(256<<20)),
	}, opts...)
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("repo server %s: %w", addr, err)
	}
	return &Client{conn: conn}, nil
}

// Render asks the repo server to render req.
func (c *Client) Render(ctx context.Context, req *repo.Request) (*repo.Response, error) {
	return call[repo.Response](ctx, c, "Render", req)
}

// Resolve asks the repo server what a revision points at now.
func (c *Client) Resolve(ctx context.Context, req *repo.ResolveRequest) (*repo.ResolveResponse, error) {
	return call[repo.ResolveResponse](ctx, c, "Resolve", req)
}

// Refs asks the repo server for a repository's branches and tags.
func (c *Client) Refs(ctx context.Context, req *repo.RefsRequest) (*repo.RefsResponse, error) {
	return call[repo.RefsResponse](ctx, c, "Refs", req)
}

// Apps asks the repo server for the apps of a revision.
func (c *Client) Apps(ctx context.Context, req *repo.AppsRequest) (*repo.AppsResponse, error) {
	return call[repo.AppsResponse](ctx, c, "Apps", req)
}

// AppDetails asks the repo server to describe a source.
func (c *Client) AppDetails(ctx context.Context, req *repo.AppDetailsRequest) (*repo.AppDetails, error) {
	return call[repo.AppDetails](ctx, c, "AppDetails", req)
}

// RevisionMetadata asks the repo server for a commit's metadata.
func (c *Client) RevisionMetadata(ctx context.Context, req *repo.RevisionMetadataRequest) (*repo.RevisionMetadata, error) {
	return call[repo.RevisionMetadata](ctx, c, "RevisionMetadata", req)
}

// OCIMetadata asks the repo server what an OCI artifact's annotations say.
func (c *Client) OCIMetadata(ctx context.Context, req *repo.OCIMetadataRequest) (*ocisource.Metadata, error) {
	return call[ocisource.Metadata](ctx, c, "OCIMetadata", req)
}

// ChartDetails asks the repo server what a chart's Chart.yaml says.
func (c *Client) ChartDetails(ctx context.Context, req *repo.ChartDetailsRequest) (*chartrepo.Details, error) {
	return call[chartrepo.Details](ctx, c, "ChartDetails", req)
}

// Charts asks the repo server for a chart repository's charts.
func (c *Client) Charts(ctx context.Context, req *repo.ChartsRequest) (*repo.ChartsResponse, error) {
	return call[repo.ChartsResponse](ctx, c, "Charts", req)
}

// Plugins lists the repo server's config management plugins.
func (c *Client) Plugins(ctx context.Context, req *repo.PluginsRequest) (*repo.PluginsResponse, error) {
	return call[repo.PluginsResponse](ctx, c, "Plugins", req)
}

// GitDirectories asks the repo server for a revision's directories.
func (c *Client) GitDirectories(ctx context.Context, req *repo.GitDirectoriesRequest) (*repo.GitDirectoriesResponse, error) {
	return call[repo.GitDirectoriesResponse](ctx, c, "GitDirectories", req)
}

// GitFiles asks the repo server for a revision's files matching a glob.
func (c *Client) GitFiles(ctx context.Context, req *repo.GitFilesRequest) (*repo.GitFilesResponse, error) {
	return call[repo.GitFilesResponse](ctx, c, "GitFiles", req)
}

// RenderFiles asks the repo server to render an archive of a source's
// directory.
func (c *Client) RenderFiles(ctx context.Context, req *repo.FilesRequest) (*repo.Response, error) {
	return call[repo.Response](ctx, c, "RenderFiles", req)
}

// call invokes one method and decodes its answer into a new Resp.
func call[Resp any](ctx context.Context, c *Client, name string, req any) (*Resp, error) {
	resp := new(Resp)
	if err := c.invoke(ctx, method(name), req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

func (c *Client) invoke(ctx context.Context, method string, req, resp any) error {
	if err := c.conn.Invoke(ctx, method, req, resp); err != nil {
		if st, ok := status.FromError(err); ok {
			return &RemoteError{Code: st.Code().String(), Message: st.Message()}
		}
		return err
	}
	return nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// RemoteError is an error the repo server returned, with its gRPC code.
type RemoteError struct {
	Code    string
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Unwrap gives repo.ErrNotFound for a NotFound answer, so repo.IsNotFound
// holds for it as for the same error in-process.
func (e *RemoteError) Unwrap() error {
	if e.Code == "NotFound" {
		return repo.ErrNotFound
	}
	return nil
}

// IsCode reports whether err is a RemoteError with the given gRPC code name.
func IsCode(err error, code string) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Code == code
}
