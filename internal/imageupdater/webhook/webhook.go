// Package webhook receives registries' push notifications, so the image
// updater checks a pushed image at once instead of at its next poll. It
// reads the webhooks Argo CD Image Updater reads (Docker Hub, GitHub
// Packages, Harbor, Quay, Azure Container Registry, Alibaba Cloud
// Container Registry and CloudEvents, such as AWS ECR's through
// EventBridge) and the distribution registry's notifications, telling them
// apart by the request's type parameter or, without one, by the payload's
// shape.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// Push is an image that a registry reports pushed.
type Push struct {
	// Image is registry/repository, without tag; Docker Hub images are
	// docker.io/namespace/name.
	Image string
	Tag   string
}

// Kind is a registry's webhook format, as the type parameter names it.
type Kind string

// The formats, named as Argo CD Image Updater names them.
const (
	DockerHub    Kind = "docker.io"
	GitHub       Kind = "ghcr.io"
	Harbor       Kind = "harbor"
	Quay         Kind = "quay.io"
	AzureACR     Kind = "acr"
	AliyunACR    Kind = "aliyun-acr"
	CloudEvents  Kind = "cloudevents"
	Distribution Kind = "distribution"
)

// Kinds are every format, in the order an unnamed payload is tried.
var Kinds = []Kind{DockerHub, AliyunACR, GitHub, Harbor, Quay, CloudEvents, AzureACR, Distribution}

// Handler answers registry webhooks.
type Handler struct {
	// Secret, if set, must come with each request of a format that has no
	// secret of its own in Secrets: as the secret query parameter, the
	// Authorization or X-Webhook-Secret header, or a GitHub
	// X-Hub-Signature-256 HMAC of the body.
	Secret string
	// Secrets are the formats' own secrets, as Image Updater's
	// DOCKER_WEBHOOK_SECRET, GHCR_WEBHOOK_SECRET and the others set them.
	Secrets map[Kind]string
	// RequireSecret refuses a format with no secret at all (Image
	// Updater's webhook.require-secret). Default: such a format is open.
	RequireSecret bool
	// OnPush is told what was pushed.
	OnPush func([]Push)
	Log    *slog.Logger
}

const maxBody = 1 << 20

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "webhooks are POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "the payload could not be read or is over 1 MiB", http.StatusBadRequest)
		return
	}
	p, kind, err := read(Kind(r.URL.Query().Get("type")), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	secret := h.secretOf(kind)
	if secret == "" && h.RequireSecret {
		http.Error(w, fmt.Sprintf("webhooks of type %s need a secret, and none is configured", kind), http.StatusUnauthorized)
		return
	}
	if !authorized(r, body, secret) || !h.guardedAlike(r, body, p, kind) {
		http.Error(w, "the webhook secret does not match", http.StatusUnauthorized)
		return
	}
	pushes, err := p.pushes(kind, r.URL.Query().Get("registry_url"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if h.Log != nil {
		h.Log.Info("Registry webhook received", "type", string(kind), "images", len(pushes))
	}
	if len(pushes) > 0 && h.OnPush != nil {
		h.OnPush(pushes)
	}
	w.WriteHeader(http.StatusAccepted)
}

// guardedAlike checks a payload against the secrets of the other formats
// it looks like: a caller's ?type naming a format with no secret must not
// let a payload of a guarded format in without that format's secret.
func (h *Handler) guardedAlike(r *http.Request, body []byte, p *payload, kind Kind) bool {
	for _, k := range Kinds {
		if k != kind && p.looksLike(k) && !authorized(r, body, h.secretOf(k)) {
			return false
		}
	}
	return true
}

// secretOf is the secret a format's requests must carry; empty: none.
func (h *Handler) secretOf(kind Kind) string {
	if s := h.Secrets[kind]; s != "" {
		return s
	}
	return h.Secret
}

// authorized reports whether the request carries secret in one of the
// ways registries send one.
func authorized(r *http.Request, body []byte, secret string) bool {
	if secret == "" {
		return true
	}
	eq := func(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	if s := r.URL.Query().Get("secret"); s != "" {
		return eq(s, secret)
	}
	if sig, ok := strings.CutPrefix(r.Header.Get("X-Hub-Signature-256"), "sha256="); ok {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		return eq(sig, hex.EncodeToString(mac.Sum(nil)))
	}
	if s := r.Header.Get("X-Webhook-Secret"); s != "" {
		return eq(s, secret)
	}
	return eq(r.Header.Get("Authorization"), secret)
}

// Parse reads a webhook payload of the given format (empty: guess it from
// the payload). Alibaba Cloud's pushes name their region's registry.
func Parse(kind Kind, body []byte) ([]Push, error) {
	p, kind, err := read(kind, body)
	if err != nil {
		return nil, err
	}
	return p.pushes(kind, "")
}

// read decodes a payload and settles its format.
func read(kind Kind, body []byte) (*payload, Kind, error) {
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, "", fmt.Errorf("the payload is not JSON: %v", err)
	}
	if kind == "" {
		for _, k := range Kinds {
			if p.looksLike(k) {
				return &p, k, nil
			}
		}
		return nil, "", fmt.Errorf("the payload is from no registry this knows; say which with ?type=%s", kindList())
	}
	for _, k := range Kinds {
		if k == kind {
			return &p, kind, nil
		}
	}
	return nil, "", fmt.Errorf("webhook type %q: want %s", kind, kindList())
}

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// splitPush splits registry/repository:tag.
func splitPush(ref string) Push {
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		return Push{Image: ref[:i], Tag: ref[i+1:]}
	}
	return Push{Image: ref}
}
