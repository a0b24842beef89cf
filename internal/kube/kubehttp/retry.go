package kubehttp

import (
	"bytes"
	"io"
	"net/http"
	"time"
)

// maxBackoff caps the wait between tries, as Argo CD does.
const maxBackoff = 10 * time.Second

// drainLimit bounds what is read of a failed answer before it is dropped
// (reading it lets the connection be reused).
const drainLimit = 512 << 10

// retryTransport sends a request again when it could not be sent or was
// answered 429 or 5xx but 501, up to max more times, waiting backoff and
// then twice as long each time.
type retryTransport struct {
	next    http.RoundTripper
	max     int
	backoff time.Duration
}

// WrappedRoundTripper lets client-go find the transport underneath.
func (t *retryTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := replayable(req)
	if err != nil {
		return nil, err
	}
	wait := t.backoff
	for try := 0; ; try++ {
		attempt := req
		if body != nil {
			attempt = req.Clone(req.Context())
			if attempt.Body, err = body(); err != nil {
				return nil, err
			}
		}
		resp, err := t.next.RoundTrip(attempt)
		if try >= t.max || !retriable(resp, err) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
			_ = resp.Body.Close()
		}
		timer := time.NewTimer(min(wait, maxBackoff))
		select {
		case <-timer.C:
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		}
		wait *= 2
	}
}

// replayable returns what gives req's body afresh for each try; nil when
// it has none.
func replayable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		return req.GetBody, nil
	}
	// client-go's bodies are in memory already; this keeps one copy.
	data, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, nil
}

// retriable reports whether a try's outcome is worth another: no answer
// at all, too many requests, or a server error but Not Implemented.
func retriable(resp *http.Response, err error) bool {
	if err != nil {
		return true
	}
	return resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented)
}
