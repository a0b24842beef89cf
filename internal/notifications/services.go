package notifications

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"sigs.k8s.io/yaml"
)

// Sender delivers rendered notifications to one configured service.
type Sender interface {
	Send(ctx context.Context, n Notification, to Destination) error
}

// newSender makes the Sender of svc, refusing a type Capstan does not
// deliver to by name. A tenant's service (self-service settings of an
// Application's namespace) is held to tenantRefusal, and a webhook of
// theirs reports failures without the answer's body.
func newSender(svc Service, tenant bool) (Sender, error) {
	if tenant {
		if err := tenantRefusal(svc); err != nil {
			return nil, err
		}
	}
	if engineTypes[svc.Type] {
		return newEngineSender(svc)
	}
	switch svc.Type {
	case "webhook":
		var o webhookOptions
		if err := yaml.Unmarshal(svc.Options, &o); err != nil {
			return nil, err
		}
		w, err := newWebhook(svc.Name, o)
		if err != nil {
			return nil, err
		}
		w.quiet = tenant
		return w, nil
	case "email":
		var o emailOptions
		if err := yaml.Unmarshal(svc.Options, &o); err != nil {
			return nil, err
		}
		return newEmail(o)
	}
	return nil, fmt.Errorf("notification service type '%s' is not supported by Capstan yet", svc.Type)
}

// tenantRefusal says why an Application namespace's own notification
// settings may not have a service: one that would act as the
// controller's cloud identity. awssqs needs its own key and secret (else
// the controller's AWS credentials sign the request); gcppubsub reads a
// key file of the controller's or the controller's default credentials.
func tenantRefusal(svc Service) error {
	switch svc.Type {
	case "awssqs":
		var o struct{ Key, Secret string }
		if err := yaml.Unmarshal(svc.Options, &o); err != nil {
			return err
		}
		if o.Key == "" || o.Secret == "" {
			return fmt.Errorf("service %s: self-service awssqs needs its own key and secret; the controller's AWS identity is not lent to an Application's namespace", svc.Name)
		}
	case "gcppubsub":
		return fmt.Errorf("service %s: gcppubsub is not available to self-service settings: it acts with a key file or the default credentials of the controller", svc.Name)
	}
	return nil
}

// checkHTTPURL accepts only http and https URLs with a host.
func checkHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid url: %w", redactURLError(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid url %s: want http or https", shownURL(u))
	}
	return u, nil
}

// shownURL is u as errors and logs may show it: without credentials, query
// or fragment, which often carry tokens.
func shownURL(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return v.String()
}

// redactURLError drops the URL url.Parse puts in its errors.
func redactURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// httpClient is the client of an HTTP service: bounded in time, and
// verifying certificates unless insecureSkipVerify says not to.
func httpClient(insecure bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user's explicit choice
	}
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// maxResponse bounds what is read of a service's answer.
const maxResponse = 64 << 10

// do sends req and returns the answer's status and (at most maxResponse
// bytes of) body. Errors name the request as errors may show it: the
// method and the URL without credentials or query.
func do(client *http.Client, req *http.Request) (*http.Response, []byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", req.Method, shownURL(req.URL), redactURLError(err))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	return resp, data, nil
}
