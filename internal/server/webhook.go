package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	reposvc "github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
)

// push is what a Git push event says, whatever the provider.
type push struct {
	urls          []string // the repository's URLs (web, HTTPS, SSH)
	ref           string   // refs/heads/<branch> or refs/tags/<tag>
	defaultBranch string   // when the provider says
	// files are the paths the pushed commits added, changed or removed,
	// when the provider lists them (GitHub, GitLab, Gitea, Gogs).
	files []string
}

// touches reports whether the push moved revision: the same branch or
// tag, or the default branch for HEAD and an empty revision.
func (p *push) touches(revision string) bool {
	rev := strings.TrimPrefix(strings.TrimPrefix(revision, "refs/heads/"), "refs/tags/")
	pushed := strings.TrimPrefix(strings.TrimPrefix(p.ref, "refs/heads/"), "refs/tags/")
	return rev == pushed || ((rev == "" || rev == "HEAD") && (p.defaultBranch == "" || p.defaultBranch == pushed))
}

// pushedCommits are the commits of a GitHub, GitLab, Gitea or Gogs push,
// with the files each touched.
type pushedCommits []struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

// files lists every file the commits touched, once each.
func (cs pushedCommits) files() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cs {
		for _, list := range [][]string{c.Added, c.Modified, c.Removed} {
			for _, f := range list {
				if !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// webhook answers POST /api/webhook: a push event from GitHub, GitLab,
// Bitbucket Cloud or Server, Gitea, Gogs or Azure DevOps, checked against
// the secret argocd-secret configures for that provider, refreshes the
// Applications that follow the pushed repository and the ApplicationSets
// whose git generators read it; a pull request event refreshes the
// ApplicationSets whose pull request generators list its repository. Any
// event refreshes ApplicationSets with a plugin generator, as Argo CD's
// does.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) error {
	done, err := s.hooks.enter(r.Context())
	if err != nil {
		return err
	}
	defer done()
	body, err := io.ReadAll(r.Body) // bounded by limit
	if err != nil {
		return withStatus(http.StatusBadRequest, fmt.Errorf("reading the webhook payload: %w", err))
	}
	secret := &corev1.Secret{}
	if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: settings.ServerSecretName}, secret); err != nil {
		return err
	}
	p, err := parsePush(r.Header, body, func(k string) string { return string(secret.Data[k]) })
	if err != nil {
		return withStatus(http.StatusBadRequest, err)
	}
	var pr *prEvent
	if p == nil { // verified, but not a push: maybe a pull request event
		if pr, err = parsePullRequest(r.Header, body); err != nil {
			return withStatus(http.StatusBadRequest, err)
		}
	}
	if p != nil {
		if err := s.refreshFollowers(r, p); err != nil {
			return err
		}
	}
	if p != nil || pr != nil {
		if err := s.refreshAppSets(r.Context(), p, pr); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{})
	return nil
}

// parsePush identifies the provider by its event header, verifies the
// request with the provider's secret (when one is configured) and reads
// the push. A nil push is another event.
func parsePush(h http.Header, body []byte, secret func(key string) string) (*push, error) {
	var p push
	switch {
	case h.Get("X-GitHub-Event") != "":
		if err := checkHMAC(body, secret("webhook.github.secret"), h.Get("X-Hub-Signature-256"), "sha256=", sha256.New); err != nil {
			return nil, fmt.Errorf("GitHub webhook: %w", err)
		}
		if h.Get("X-GitHub-Event") != "push" {
			return nil, nil
		}
		return parseRepoPush(body, "GitHub")
	case h.Get("X-Gitlab-Event") != "":
		if want := secret("webhook.gitlab.secret"); want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(h.Get("X-Gitlab-Token"))) != 1 {
			return nil, fmt.Errorf("GitLab webhook: the X-Gitlab-Token does not match webhook.gitlab.secret")
		}
		if ev := h.Get("X-Gitlab-Event"); ev != "Push Hook" && ev != "Tag Push Hook" {
			return nil, nil
		}
		var e struct {
			Ref     string `json:"ref"`
			Project struct {
				WebURL        string `json:"web_url"`
				HTTPURL       string `json:"git_http_url"`
				SSHURL        string `json:"git_ssh_url"`
				DefaultBranch string `json:"default_branch"`
			} `json:"project"`
			Commits pushedCommits `json:"commits"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("GitLab push payload: %w", err)
		}
		p = push{urls: []string{e.Project.WebURL, e.Project.HTTPURL, e.Project.SSHURL}, ref: e.Ref, defaultBranch: e.Project.DefaultBranch, files: e.Commits.files()}
	case h.Get("X-Gitea-Event") != "" || h.Get("X-Gogs-Event") != "":
		sig, key := h.Get("X-Gitea-Signature"), "webhook.gitea.secret"
		if h.Get("X-Gitea-Event") == "" {
			sig, key = h.Get("X-Gogs-Signature"), "webhook.gogs.secret"
		}
		if err := checkHMAC(body, secret(key), sig, "", sha256.New); err != nil {
			return nil, fmt.Errorf("webhook from Gitea or Gogs: %w", err)
		}
		if h.Get("X-Gitea-Event")+h.Get("X-Gogs-Event") != "push" {
			return nil, nil
		}
		return parseRepoPush(body, "Gitea or Gogs")
	case h.Get("X-Event-Key") == "repo:push" || strings.HasPrefix(h.Get("X-Event-Key"), "pullrequest:"): // Bitbucket Cloud
		if want := secret("webhook.bitbucket.uuid"); want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(h.Get("X-Hook-UUID"))) != 1 {
			return nil, fmt.Errorf("webhook from Bitbucket: the X-Hook-UUID does not match webhook.bitbucket.uuid")
		}
		if h.Get("X-Event-Key") != "repo:push" {
			return nil, nil
		}
		var e struct {
			Repository struct {
				Links struct {
					HTML struct {
						Href string `json:"href"`
					} `json:"html"`
				} `json:"links"`
			} `json:"repository"`
			Push struct {
				Changes []struct {
					New struct {
						Type string `json:"type"`
						Name string `json:"name"`
					} `json:"new"`
				} `json:"changes"`
			} `json:"push"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("push payload from Bitbucket: %w", err)
		}
		p = push{urls: []string{e.Repository.Links.HTML.Href}}
		if len(e.Push.Changes) > 0 {
			p.ref = refOf(e.Push.Changes[0].New.Type, e.Push.Changes[0].New.Name)
		}
	case h.Get("X-Event-Key") != "": // Bitbucket Server
		if err := checkHMAC(body, secret("webhook.bitbucketserver.secret"), h.Get("X-Hub-Signature"), "sha256=", sha256.New); err != nil {
			return nil, fmt.Errorf("webhook from Bitbucket Server: %w", err)
		}
		if h.Get("X-Event-Key") != "repo:refs_changed" {
			return nil, nil
		}
		var e struct {
			Repository struct {
				Links struct {
					Clone []struct {
						Href string `json:"href"`
					} `json:"clone"`
				} `json:"links"`
			} `json:"repository"`
			Changes []struct {
				RefID string `json:"refId"`
			} `json:"changes"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("push payload from Bitbucket Server: %w", err)
		}
		for _, c := range e.Repository.Links.Clone {
			p.urls = append(p.urls, c.Href)
		}
		if len(e.Changes) > 0 {
			p.ref = e.Changes[0].RefID
		}
	case h.Get("X-Vss-Activityid") != "": // Azure DevOps service hooks
		return parseAzurePush(h, body, secret)
	default:
		return nil, fmt.Errorf("unknown webhook: no event header of GitHub, GitLab, Bitbucket, Gitea, Gogs or Azure DevOps")
	}
	return &p, nil
}

// parseAzurePush checks an Azure DevOps service hook's basic
// authentication against webhook.azuredevops.username and .password (when
// set) and reads a git.push event; other events are nil.
func parseAzurePush(h http.Header, body []byte, secret func(key string) string) (*push, error) {
	user, pass := secret("webhook.azuredevops.username"), secret("webhook.azuredevops.password")
	if user != "" || pass != "" {
		r := http.Request{Header: h}
		gotUser, gotPass, _ := r.BasicAuth()
		if subtle.ConstantTimeCompare([]byte(user), []byte(gotUser))&subtle.ConstantTimeCompare([]byte(pass), []byte(gotPass)) != 1 {
			return nil, fmt.Errorf("webhook from Azure DevOps: basic authentication does not match webhook.azuredevops.username and password")
		}
	}
	var e struct {
		EventType string `json:"eventType"`
		Resource  struct {
			RefUpdates []struct {
				Name string `json:"name"`
			} `json:"refUpdates"`
			Repository struct {
				RemoteURL     string `json:"remoteUrl"`
				DefaultBranch string `json:"defaultBranch"`
			} `json:"repository"`
		} `json:"resource"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("payload from Azure DevOps: %w", err)
	}
	if e.EventType != "git.push" {
		return nil, nil
	}
	p := &push{urls: []string{e.Resource.Repository.RemoteURL}, defaultBranch: strings.TrimPrefix(e.Resource.Repository.DefaultBranch, "refs/heads/")}
	if len(e.Resource.RefUpdates) > 0 {
		p.ref = e.Resource.RefUpdates[0].Name
	}
	return p, nil
}

// parseRepoPush reads the push payload GitHub, Gitea and Gogs share.
func parseRepoPush(body []byte, provider string) (*push, error) {
	var e struct {
		Ref        string `json:"ref"`
		Repository struct {
			HTMLURL       string `json:"html_url"`
			CloneURL      string `json:"clone_url"`
			SSHURL        string `json:"ssh_url"`
			DefaultBranch string `json:"default_branch"`
		} `json:"repository"`
		Commits pushedCommits `json:"commits"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("push payload from %s: %w", provider, err)
	}
	return &push{urls: []string{e.Repository.HTMLURL, e.Repository.CloneURL, e.Repository.SSHURL}, ref: e.Ref,
		defaultBranch: e.Repository.DefaultBranch, files: e.Commits.files()}, nil
}

func refOf(kind, name string) string {
	if kind == "tag" {
		return "refs/tags/" + name
	}
	return "refs/heads/" + name
}

// checkHMAC verifies a hex HMAC signature of body (after prefix) made with
// secret; with no secret configured, any request is accepted, as in Argo CD.
func checkHMAC(body []byte, secret, signature, prefix string, h func() hash.Hash) error {
	if secret == "" {
		return nil
	}
	got, err := hex.DecodeString(strings.TrimPrefix(signature, prefix))
	if err != nil || signature == "" {
		return fmt.Errorf("missing or malformed signature")
	}
	mac := hmac.New(h, []byte(secret))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return fmt.Errorf("the signature does not match the configured secret")
	}
	return nil
}

// refreshFollowers refreshes the Applications that follow the pushed
// repository at the pushed branch or tag, but for those whose
// manifest-generate-paths the pushed files do not touch: through the
// in-process controller's repository check when there is one, otherwise
// with the refresh annotation, as Argo CD's API server does, spread by
// argocd-cm's webhook.refresh.jitter.
func (s *Server) refreshFollowers(r *http.Request, p *push) error {
	if s.opts.RepoChanged != nil {
		for _, u := range p.urls {
			if u != "" {
				s.opts.RepoChanged(reposvc.Change{URL: u, Files: p.files})
			}
		}
		return nil
	}
	var list v1alpha1.ApplicationList
	if err := s.opts.Client.List(r.Context(), &list, client.InNamespace(s.opts.Namespace)); err != nil {
		return err
	}
	var followers []*v1alpha1.Application
	for i := range list.Items {
		if follows(&list.Items[i], p) {
			followers = append(followers, &list.Items[i])
		}
	}
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return err
	}
	jitter, err := cm.WebhookRefreshJitter()
	if err != nil {
		s.opts.Log.Warn("reading the webhook refresh jitter", "error", err)
	}
	return s.hooks.refresh(r.Context(), s.opts.Client, followers, jitter, func(err error) {
		s.opts.Log.Warn("refreshing an Application after a webhook", "error", err)
	})
}

// follows reports whether one of app's sources is the pushed repository
// at the pushed ref (HEAD and an empty revision follow the default branch)
// and, when app names its manifest-generate-paths, whether the pushed files
// touch one of them.
func follows(app *v1alpha1.Application, p *push) bool {
	for _, src := range app.Spec.GetSources() {
		if !v1alpha1.PathsChanged(app.ManifestGeneratePaths(src), p.files) {
			continue
		}
		same := false
		for _, u := range p.urls {
			if u != "" && git.NormalizeURL(u) == git.NormalizeURL(src.RepoURL) {
				same = true
			}
		}
		if !same {
			continue
		}
		if p.touches(src.TargetRevision) {
			return true
		}
	}
	return false
}
