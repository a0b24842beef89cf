package server

import (
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/sync/semaphore"

	reposvc "github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Request body limits, by what a request is for. A body over its limit is
// refused (413) before it is read when its length is declared, and as
// soon as it passes the limit otherwise.
const (
	// maxBody bounds any request body not named below: an Application
	// with many sources and parameters is a few hundred kilobytes.
	maxBody = 4 << 20
	// maxLoginBody bounds a login (a user name and a password).
	maxLoginBody = 64 << 10
	// maxFilesBody bounds the archive of a local directory sent to be
	// rendered (manifests with files); the request is larger by its
	// encoding.
	maxFilesBody = reposvc.MaxFilesArchive
)

// Unauthenticated callers share a budget: at most this many requests at
// once, holding at most this many bytes of declared (or possible) body.
// Beyond it they are told to come back later (429), so a flood of large
// anonymous requests costs the process a bounded amount of memory.
const (
	maxUnauthenticatedRequests = 64
	unauthenticatedBodyBudget  = 64 << 20
)

// webhookPath is where Git providers send their events.
const webhookPath = "/api/webhook"

// bodyLimit is the most a request to path may send; a Git provider's
// event is bounded by argocd-cm (see webhookLimit).
func bodyLimit(path string) int64 {
	switch {
	case path == "/api/v1/session" || strings.HasSuffix(path, ".SessionService/Create"):
		return maxLoginBody
	case path == manifestsWithFilesPath, strings.HasSuffix(path, ".ApplicationService/GetManifestsWithFiles"):
		// The archive, base64 in JSON or framed in small gRPC messages.
		return maxFilesBody * 3 / 2
	}
	return maxBody
}

// limits holds the shared budget of unauthenticated callers.
type limits struct {
	requests *semaphore.Weighted
	bytes    *semaphore.Weighted
}

func newLimits() *limits {
	return &limits{requests: semaphore.NewWeighted(maxUnauthenticatedRequests), bytes: semaphore.NewWeighted(unauthenticatedBodyBudget)}
}

// limit bounds every request's body, and the number and body bytes of the
// requests in flight whose caller has no valid session token of Capstan's.
func (s *Server) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		max := bodyLimit(r.URL.Path)
		if r.URL.Path == webhookPath {
			max = s.webhookLimit(r)
		}
		if r.ContentLength > max {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes is over the limit of %d", r.ContentLength, max))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		if !s.hasSession(r) {
			weight := max // a body of undeclared length may grow to the limit
			if r.ContentLength >= 0 {
				weight = r.ContentLength
			}
			if !s.limits.requests.TryAcquire(1) {
				writeError(w, http.StatusTooManyRequests, "too many requests without a session; try again later")
				return
			}
			defer s.limits.requests.Release(1)
			if !s.limits.bytes.TryAcquire(weight) {
				writeError(w, http.StatusTooManyRequests, "too many large requests without a session; try again later")
				return
			}
			defer s.limits.bytes.Release(weight)
		}
		next.ServeHTTP(w, r)
	})
}

// hasSession reports whether the request carries a token Capstan signed
// (checked by its signature only; authentication proper comes later).
func (s *Server) hasSession(r *http.Request) bool {
	token := s.requestToken(r)
	if token == "" {
		return false
	}
	_, err := s.sessions.Parse(token)
	return err == nil
}

// webhookLimit is argocd-cm's webhook.maxPayloadSizeMB in bytes; Argo CD's
// default when it cannot be read, with the reason logged.
func (s *Server) webhookLimit(r *http.Request) int64 {
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		s.opts.Log.Warn("reading the webhook payload limit", "error", err)
		return settings.DefaultWebhookMaxPayloadMB << 20
	}
	max, err := cm.WebhookMaxPayloadBytes()
	if err != nil {
		s.opts.Log.Warn("reading the webhook payload limit", "error", err)
	}
	return max
}
