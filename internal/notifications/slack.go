package notifications

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// slackOptions are service.slack's fields.
type slackOptions struct {
	Token              string `json:"token"`
	Username           string `json:"username,omitempty"`
	Icon               string `json:"icon,omitempty"`
	APIURL             string `json:"apiURL,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
}

// defaultSlackAPI is Slack's Web API.
const defaultSlackAPI = "https://slack.com/api/"

// slack posts notifications with chat.postMessage, the recipient being
// the channel.
type slack struct {
	opts   slackOptions
	api    *url.URL
	client *http.Client
}

func newSlack(o slackOptions) (*slack, error) {
	if o.APIURL == "" {
		o.APIURL = defaultSlackAPI
	}
	u, err := checkHTTPURL(o.APIURL)
	if err != nil {
		return nil, fmt.Errorf("slack: apiURL: %w", err)
	}
	return &slack{opts: o, api: u, client: httpClient(o.InsecureSkipVerify)}, nil
}

func (s *slack) Send(ctx context.Context, n Notification, to Destination) error {
	msg := map[string]any{"channel": to.Recipient, "text": n.Message}
	if s.opts.Username != "" {
		msg["username"] = s.opts.Username
	}
	if icon := s.opts.Icon; icon != "" {
		if strings.HasPrefix(icon, ":") {
			msg["icon_emoji"] = icon
		} else {
			msg["icon_url"] = icon
		}
	}
	if n.Slack != nil {
		for key, text := range map[string]string{"attachments": n.Slack.Attachments, "blocks": n.Slack.Blocks} {
			if strings.TrimSpace(text) == "" {
				continue
			}
			var v []any
			if err := json.Unmarshal([]byte(text), &v); err != nil {
				return fmt.Errorf("slack: %s are not a JSON array: %w", key, err)
			}
			msg[key] = v
		}
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	target := strings.TrimRight(s.api.String(), "/") + "/chat.postMessage"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("slack: %w", redactURLError(err))
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+s.opts.Token)
	resp, answer, err := do(s.client, req)
	if err != nil {
		return fmt.Errorf("slack: %w", err)
	}
	var r struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(answer, &r) != nil {
		return fmt.Errorf("slack: POST %s: %s", shownURL(req.URL), resp.Status)
	}
	if !r.OK {
		return fmt.Errorf("slack: %s", r.Error)
	}
	return nil
}
