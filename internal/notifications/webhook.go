package notifications

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/capstan-cd/capstan/internal/safetext"
)

// webhookOptions are service.webhook.<name>'s fields.
type webhookOptions struct {
	URL     string `json:"url"`
	Headers []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers,omitempty"`
	BasicAuth *struct {
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"basicAuth,omitempty"`
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// RetryMax is how often a failed request is tried again (0: the
	// default, 3); RetryWaitMin and RetryWaitMax bound the wait between
	// tries (0: the defaults, 1s and 5s).
	RetryMax     int      `json:"retryMax,omitempty"`
	RetryWaitMin duration `json:"retryWaitMin,omitempty"`
	RetryWaitMax duration `json:"retryWaitMax,omitempty"`
}

// duration reads "5s" as Go writes durations, or a number of nanoseconds
// as Argo CD's JSON decoding of time.Duration does.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case float64:
		*d = duration(v)
	case string:
		p, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		*d = duration(p)
	default:
		return fmt.Errorf("a duration is a string such as 5s or a number of nanoseconds, not %s", b)
	}
	return nil
}

// orDefault is d, or def when d is not above zero.
func (d duration) orDefault(def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return time.Duration(d)
}

// webhook sends a template's webhook.<name> part as an HTTP request.
type webhook struct {
	name             string
	url              *url.URL
	opts             webhookOptions
	client           *http.Client
	retries          int
	waitMin, waitMax time.Duration
	// quiet leaves the answer's body out of errors: a tenant's webhook
	// may point at an internal service, whose answers the tenant would
	// otherwise read in the Application's Events.
	quiet bool
}

func newWebhook(name string, o webhookOptions) (*webhook, error) {
	u, err := checkHTTPURL(o.URL)
	if err != nil {
		return nil, err
	}
	w := &webhook{name: name, url: u, opts: o, client: httpClient(o.InsecureSkipVerify),
		retries: 3, waitMin: o.RetryWaitMin.orDefault(time.Second), waitMax: o.RetryWaitMax.orDefault(5 * time.Second)}
	if o.RetryMax > 0 {
		w.retries = o.RetryMax
	}
	return w, nil
}

// Send makes the request the notification's webhook.<name> part for this
// service describes: its method (default GET), its path appended to the
// service's url, its body. Without such a part it sends the message with
// GET, as Argo CD does.
func (w *webhook) Send(ctx context.Context, n Notification, _ Destination) error {
	method, body, target := http.MethodGet, n.Message, w.url.String()
	if part, ok := n.Webhook[w.name]; ok {
		body = part.Body
		if part.Method != "" {
			method = strings.ToUpper(part.Method)
		}
		if part.Path != "" {
			target = strings.TrimRight(target, "/") + "/" + strings.TrimLeft(part.Path, "/")
		}
	}
	wait := w.waitMin
	for try := 0; ; try++ {
		retry, err := w.do(ctx, method, target, body)
		if err == nil {
			return nil
		}
		if !retry || try >= w.retries {
			return fmt.Errorf("webhook %s: %w", w.name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("webhook %s: %w", w.name, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(wait*2, w.waitMax)
	}
}

// do makes one request; it tells whether a failure is worth another try
// (a connection error, 429 or a 5xx answer).
func (w *webhook) do(ctx context.Context, method, target, body string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, strings.NewReader(body))
	if err != nil {
		return false, redactURLError(err)
	}
	for _, h := range w.opts.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if b := w.opts.BasicAuth; b != nil {
		req.SetBasicAuth(b.Username, b.Password)
	}
	resp, answer, err := do(w.client, req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, nil
	}
	err = fmt.Errorf("%s %s: %s", method, shownURL(req.URL), resp.Status)
	if !w.quiet {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(safetext.Truncate(string(answer), 512)))
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500, err
}
