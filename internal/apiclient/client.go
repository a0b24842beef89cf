package apiclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls the REST API of one server.
type Client struct {
	base  string
	token string
	http  *http.Client
	// rpcHTTP is set with GRPCWeb: the calls go over the RPC API.
	rpcHTTP *http.Client
}

// New returns a Client for s, sending token (if any) as a bearer token.
func New(s Server, token string) *Client {
	c, err := Connect(s, token, Options{})
	if err != nil {
		panic(err) // the zero Options read no file and cannot fail
	}
	return c
}

// Connect returns a Client for s with the flags' connection options o,
// sending token (if any) as a bearer token.
func Connect(s Server, token string, o Options) (*Client, error) {
	scheme := "https://"
	if s.PlainText {
		scheme = "http://"
	}
	base := s.Server
	if !strings.Contains(base, "://") {
		base = scheme + base
	}
	base = strings.TrimSuffix(base, "/")
	if root := strings.Trim(s.GRPCWebRootPath, "/"); root != "" {
		base += "/" + root
	}
	tr, err := o.transport(s)
	if err != nil {
		return nil, err
	}
	c := &Client{base: base, token: token, http: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
	if s.GRPCWeb || s.GRPCWebRootPath != "" {
		// gRPC-Web works over HTTP/1.1; streams must outlive Timeout.
		c.rpcHTTP = &http.Client{Transport: tr}
	}
	return c, nil
}

// Error is an error the API answered with.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status) }

// errorFrom reads an error answer: Argo CD's {"message": ...}, or the text.
func errorFrom(status int, data []byte) *Error {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &e) != nil || e.Message == "" {
		e.Message = strings.TrimSpace(string(data))
	}
	return &Error{Status: status, Message: e.Message}
}

// Do sends a request to path with a JSON body (nil: none) and decodes the JSON
// answer into out (nil: ignored). Canceling ctx abandons the call.
func (c *Client) Do(ctx context.Context, method string, path Path, body, out any) error {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	if c.rpcHTTP != nil {
		ctx, cancel := context.WithTimeout(ctx, c.http.Timeout)
		defer cancel()
		return c.doRPC(ctx, method, path, data, out)
	}
	return c.send(ctx, method, path, "application/json", data, out)
}

// DoRaw sends a body of another content type than JSON (an archive, say)
// over the REST API, and decodes the JSON answer into out.
func (c *Client) DoRaw(ctx context.Context, method string, path Path, contentType string, body []byte, out any) error {
	if c.rpcHTTP != nil {
		return fmt.Errorf("%s %s has no form in Argo CD's RPC API: leave out --grpc-web", method, path.route())
	}
	return c.send(ctx, method, path, contentType, body, out)
}

// send makes one REST call.
func (c *Client) send(ctx context.Context, method string, path Path, contentType string, data []byte, out any) error {
	var rd io.Reader
	if data != nil {
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+string(path), rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return errorFrom(resp.StatusCode, answer)
	}
	if out != nil {
		return json.Unmarshal(answer, out)
	}
	return nil
}

// Stream reads a Server-Sent Events answer, calling each with the data of
// every message until it returns false, the stream ends or ctx is done.
func (c *Client) Stream(ctx context.Context, path Path, each func(data []byte) bool) error {
	if c.rpcHTTP != nil {
		return c.streamRPC(ctx, path, each)
	}
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+string(path), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	// No overall timeout: a stream lasts as long as the caller wants.
	resp, err := (&http.Client{Transport: c.http.Transport}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return errorFrom(resp.StatusCode, data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && !each(data) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return sc.Err()
}

// Logout ends the client's session on the server, as Argo CD's CLI does:
// POST /auth/logout with the token as the session cookie, so every
// replica refuses it from then on. A token the server does not know as a
// session (an API key) is left as it is.
func (c *Client) Logout(ctx context.Context) error {
	if c.token == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/auth/logout", http.NoBody)
	if err != nil {
		return err
	}
	req.AddCookie(&http.Cookie{Name: "argocd.token", Value: c.token})
	hc := *c.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusOK {
		return &Error{Status: resp.StatusCode, Message: "the server did not end the session"}
	}
	return nil
}
