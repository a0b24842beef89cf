// Package webhook receives registries' push notifications, so the image
// updater checks a pushed image at once instead of at its next poll. It
// reads Docker Hub's, GitHub Packages', Harbor's and Quay's webhooks and
// the distribution registry's notifications, telling them apart by the
// request's type parameter or, without one, by the payload's shape.
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

// Handler answers registry webhooks.
type Handler struct {
	// Secret, if set, must come with each request: as the secret query
	// parameter, the Authorization header (Harbor), or a GitHub
	// X-Hub-Signature-256 HMAC of the body.
	Secret string
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
	if !h.authorized(r, body) {
		http.Error(w, "the webhook secret does not match", http.StatusUnauthorized)
		return
	}
	pushes, err := Parse(r.URL.Query().Get("type"), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if h.Log != nil {
		h.Log.Info("Registry webhook received", "images", len(pushes))
	}
	if len(pushes) > 0 && h.OnPush != nil {
		h.OnPush(pushes)
	}
	w.WriteHeader(http.StatusAccepted)
}

func (h *Handler) authorized(r *http.Request, body []byte) bool {
	if h.Secret == "" {
		return true
	}
	eq := func(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	if s := r.URL.Query().Get("secret"); s != "" {
		return eq(s, h.Secret)
	}
	if sig, ok := strings.CutPrefix(r.Header.Get("X-Hub-Signature-256"), "sha256="); ok {
		mac := hmac.New(sha256.New, []byte(h.Secret))
		mac.Write(body)
		return eq(sig, hex.EncodeToString(mac.Sum(nil)))
	}
	return eq(r.Header.Get("Authorization"), h.Secret)
}

// Parse reads a webhook payload of the given type (docker.io, ghcr.io,
// harbor, quay.io, distribution; empty: guess from the payload).
func Parse(kind string, body []byte) ([]Push, error) {
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("the payload is not JSON: %v", err)
	}
	if kind == "" {
		switch {
		case p.PushData != nil:
			kind = "docker.io"
		case p.RegistryPackage != nil || p.Package != nil:
			kind = "ghcr.io"
		case p.EventData != nil:
			kind = "harbor"
		case p.DockerURL != "":
			kind = "quay.io"
		case p.Events != nil:
			kind = "distribution"
		default:
			return nil, fmt.Errorf("the payload is from no registry this knows; say which with ?type=docker.io, ghcr.io, harbor, quay.io or distribution")
		}
	}
	var out []Push
	switch kind {
	case "docker.io":
		if p.PushData == nil || p.Repository.RepoName == "" {
			return nil, fmt.Errorf("not a Docker Hub push: no push_data or repository.repo_name")
		}
		repo := p.Repository.RepoName
		if !strings.Contains(repo, "/") {
			repo = "library/" + repo
		}
		out = append(out, Push{Image: "docker.io/" + repo, Tag: p.PushData.Tag})
	case "ghcr.io":
		pkg := p.RegistryPackage
		if pkg == nil {
			pkg = p.Package
		}
		if pkg == nil || pkg.PackageVersion.PackageURL == "" {
			return nil, fmt.Errorf("not a GitHub Packages event: no package_version.package_url")
		}
		out = append(out, splitPush(pkg.PackageVersion.PackageURL))
	case "harbor":
		if p.EventData == nil {
			return nil, fmt.Errorf("not a Harbor event: no event_data")
		}
		if p.Type != "" && p.Type != "PUSH_ARTIFACT" {
			return nil, nil
		}
		for _, res := range p.EventData.Resources {
			if res.ResourceURL != "" {
				out = append(out, splitPush(res.ResourceURL))
			}
		}
	case "quay.io":
		if p.DockerURL == "" {
			return nil, fmt.Errorf("not a Quay event: no docker_url")
		}
		for _, tag := range p.UpdatedTags {
			out = append(out, Push{Image: p.DockerURL, Tag: tag})
		}
		if len(p.UpdatedTags) == 0 {
			out = append(out, Push{Image: p.DockerURL})
		}
	case "distribution":
		for _, e := range p.Events {
			if e.Action != "push" || e.Target.Repository == "" || e.Target.Tag == "" || e.Request.Host == "" {
				continue // blob pushes and untagged manifests change no tag
			}
			out = append(out, Push{Image: e.Request.Host + "/" + e.Target.Repository, Tag: e.Target.Tag})
		}
	default:
		return nil, fmt.Errorf("webhook type %q: want docker.io, ghcr.io, harbor, quay.io or distribution", kind)
	}
	return out, nil
}

// splitPush splits registry/repository:tag.
func splitPush(ref string) Push {
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		return Push{Image: ref[:i], Tag: ref[i+1:]}
	}
	return Push{Image: ref}
}

// payload holds the fields of every supported webhook.
type payload struct {
	// Docker Hub
	PushData *struct {
		Tag string `json:"tag"`
	} `json:"push_data"`
	// Docker Hub's repository is an object; Quay's is a string.
	Repository dockerHubRepository `json:"repository"`
	// GitHub Packages
	RegistryPackage *githubPackage `json:"registry_package"`
	Package         *githubPackage `json:"package"`
	// Harbor
	Type      string `json:"type"`
	EventData *struct {
		Resources []struct {
			ResourceURL string `json:"resource_url"`
		} `json:"resources"`
	} `json:"event_data"`
	// Quay
	DockerURL   string   `json:"docker_url"`
	UpdatedTags []string `json:"updated_tags"`
	// distribution's notifications
	Events []struct {
		Action string `json:"action"`
		Target struct {
			Repository string `json:"repository"`
			Tag        string `json:"tag"`
		} `json:"target"`
		Request struct {
			Host string `json:"host"`
		} `json:"request"`
	} `json:"events"`
}

type githubPackage struct {
	PackageVersion struct {
		PackageURL string `json:"package_url"`
	} `json:"package_version"`
}

// dockerHubRepository reads Docker Hub's repository object and ignores
// Quay's repository string.
type dockerHubRepository struct {
	RepoName string `json:"repo_name"`
}

func (d *dockerHubRepository) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '{' {
		type plain dockerHubRepository
		return json.Unmarshal(data, (*plain)(d))
	}
	return nil
}
