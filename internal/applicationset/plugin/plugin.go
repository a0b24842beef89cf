// Package plugin asks an ApplicationSet plugin generator's HTTP service for
// parameter sets, speaking Argo CD's plugin protocol: a JSON POST to
// <baseUrl>/api/v1/getparams.execute carrying the ApplicationSet's name and
// the generator's input parameters, with the service's token as a bearer
// token, answered by {"output": {"parameters": [ {...}, ... ]}}.
//
// The answer is bounded (MaxResponseBytes, MaxParameterSets) and the call
// times out, so a slow or hostile service costs one generator run, never
// the controller.
package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Path is where a plugin service answers, below its base URL.
const Path = "api/v1/getparams.execute"

const (
	// DefaultTimeout bounds one call when the plugin's ConfigMap sets no
	// requestTimeout: Argo CD's 30 seconds.
	DefaultTimeout = 30 * time.Second
	// MaxResponseBytes bounds the answer read from a service.
	MaxResponseBytes = 16 << 20
	// MaxParameterSets bounds the parameter sets one answer may hold.
	MaxParameterSets = 10000
	// maxErrorBody bounds how much of a failed answer an error repeats.
	maxErrorBody = 256
)

// ErrTooLarge is returned when an answer exceeds MaxResponseBytes or
// MaxParameterSets.
var ErrTooLarge = errors.New("plugin answer too large")

// Request is the body sent to a plugin service.
type Request struct {
	// ApplicationSetName names the ApplicationSet asking, for the
	// service's logs.
	ApplicationSetName string `json:"applicationSetName"`
	Input              Input  `json:"input"`
}

// Input carries the generator's input.parameters unchanged.
type Input struct {
	Parameters map[string]any `json:"parameters"`
}

// Response is a plugin service's answer.
type Response struct {
	Output struct {
		Parameters []map[string]any `json:"parameters"`
	} `json:"output"`
}

// Client calls one plugin service.
type Client struct {
	// BaseURL is the service's address (the ConfigMap's baseUrl).
	BaseURL string
	// Token is sent as "Authorization: Bearer <token>"; required.
	Token string
	// Timeout bounds the call. Default DefaultTimeout.
	Timeout time.Duration
	// HTTP sends the request. Default: a client of its own with Timeout.
	HTTP *http.Client
}

// Params asks the service for the parameter sets of appSet's generator
// with the given input parameters.
func (c Client) Params(ctx context.Context, appSet string, params map[string]any) ([]map[string]any, error) {
	if params == nil {
		params = map[string]any{}
	}
	body, err := json.Marshal(Request{ApplicationSetName: appSet, Input: Input{Parameters: params}})
	if err != nil {
		return nil, fmt.Errorf("encoding the plugin request: %w", err)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint(c.BaseURL), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("plugin baseUrl: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: timeout}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("calling plugin service: %w", err)
	}
	defer resp.Body.Close()
	return readAnswer(resp)
}

// endpoint joins the base URL and Path with exactly one slash.
func endpoint(base string) string {
	return strings.TrimSuffix(base, "/") + "/" + Path
}

// readAnswer decodes a bounded answer, or names a failed one by its status.
func readAnswer(resp *http.Response) ([]map[string]any, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading plugin answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("plugin service answered %d: %s", resp.StatusCode, errorText(data))
	}
	if len(data) > MaxResponseBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxResponseBytes)
	}
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decoding plugin answer: %w", err)
	}
	if n := len(r.Output.Parameters); n > MaxParameterSets {
		return nil, fmt.Errorf("%w: %d parameter sets, at most %d", ErrTooLarge, n, MaxParameterSets)
	}
	return r.Output.Parameters, nil
}

// errorText is the message of a failed answer: its JSON "message" or
// "error" field, else its first bytes.
func errorText(data []byte) string {
	var body struct{ Message, Error string }
	if json.Unmarshal(data, &body) == nil {
		if body.Message != "" {
			return clip(body.Message)
		}
		if body.Error != "" {
			return clip(body.Error)
		}
	}
	return clip(string(data))
}

func clip(s string) string {
	if len(s) > maxErrorBody {
		return s[:maxErrorBody] + "…"
	}
	return s
}
