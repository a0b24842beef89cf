package reposerver

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/capstan-cd/capstan/internal/repo"
)

// Client is a repo.Renderer that calls a remote repo server.
type Client struct {
	conn *grpc.ClientConn
}

var _ repo.Renderer = (*Client)(nil)

// Dial connects to a repo server at addr (host:port). The connection is
// plaintext: repo servers are reached inside the cluster network, as in
// Argo CD's default install.
func Dial(addr string, opts ...grpc.DialOption) (*Client, error) {
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
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
	resp := &repo.Response{}
	if err := c.invoke(ctx, renderMethod, req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// Resolve asks the repo server what a revision points at now.
func (c *Client) Resolve(ctx context.Context, req *repo.ResolveRequest) (*repo.ResolveResponse, error) {
	resp := &repo.ResolveResponse{}
	if err := c.invoke(ctx, resolveMethod, req, resp); err != nil {
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

// IsCode reports whether err is a RemoteError with the given gRPC code name.
func IsCode(err error, code string) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Code == code
}
