package apiclient

import (
	"bytes"
	"crypto/tls"
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
}

// New returns a Client for s, sending token (if any) as a bearer token.
func New(s Server, token string) *Client {
	scheme := "https://"
	if s.PlainText {
		scheme = "http://"
	}
	base := s.Server
	if !strings.Contains(base, "://") {
		base = scheme + base
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: s.Insecure} // #nosec: only when the user asks with --insecure
	return &Client{base: strings.TrimSuffix(base, "/"), token: token, http: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// Error is an error the API answered with.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status) }

// Do sends a request with a JSON body (nil: none) and decodes the JSON
// answer into out (nil: ignored).
func (c *Client) Do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(data))
		}
		return &Error{Status: resp.StatusCode, Message: e.Message}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}
