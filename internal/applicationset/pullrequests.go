package applicationset

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gosimple/slug"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset/pullrequest"
	"github.com/capstan-cd/capstan/internal/settings"
)

// DefaultPullRequestRequeueAfter is how often the pull request generator
// asks its provider again, as in Argo CD (webhooks make it sooner).
const DefaultPullRequestRequeueAfter = 30 * time.Minute

// maxSlug bounds branch_slug, leaving room in a 63-character DNS label
// for a prefix or suffix, as Argo CD does.
const maxSlug = 50

// pullRequests yields one parameter set per open pull request that the
// provider lists and the filters keep, with Argo CD's parameters.
func (g *generation) pullRequests(gen *v1alpha1.PullRequestGenerator) ([]Params, error) {
	seconds := gen.RequeueAfterSeconds
	if seconds == nil {
		d := int64(DefaultPullRequestRequeueAfter / time.Second)
		seconds = &d
	}
	g.wantRequeue(seconds)
	svc, err := g.pullRequestService(gen)
	if err != nil {
		return nil, err
	}
	prs, err := pullrequest.Filtered(g.ctx, svc, gen.Filters)
	if errors.Is(err, pullrequest.ErrRepositoryNotFound) && gen.ContinueOnRepoNotFoundError {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Params
	for _, pr := range prs {
		p := Params{
			"number": strconv.FormatInt(pr.Number, 10), "title": pr.Title,
			"branch": pr.Branch, "branch_slug": slugOf(pr.Branch),
			"target_branch": pr.TargetBranch, "target_branch_slug": slugOf(pr.TargetBranch),
			"head_sha": pr.HeadSHA, "head_short_sha": prefix(pr.HeadSHA, 8), "head_short_sha_7": prefix(pr.HeadSHA, 7),
			"author": pr.Author,
		}
		if g.r.goTemplate { // labels only for Go templates, as in Argo CD
			p["labels"] = pr.Labels
		}
		if p, err = g.withValues(p, gen.Values); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// pullRequestService is the provider a pull request generator names.
func (g *generation) pullRequestService(gen *v1alpha1.PullRequestGenerator) (pullrequest.Service, error) {
	switch {
	case gen.Github != nil:
		c := gen.Github
		tokenRef := c.TokenRef
		if c.AppSecretName != "" { // the app's credentials instead, as in Argo CD
			tokenRef = nil
		}
		token, hc, err := g.reach("pullRequest.github", c.API, tokenRef, false, nil)
		if err == nil && c.AppSecretName != "" {
			hc, err = g.githubAppClient("pullRequest.github", c.AppSecretName, c.API, c.Owner, hc)
		}
		if err != nil {
			return nil, err
		}
		return pullrequest.GitHub(c.API, c.Owner, c.Repo, token, c.Labels, g.countedGitHub(hc))
	case gen.GitLab != nil:
		c := gen.GitLab
		token, hc, err := g.reach("pullRequest.gitlab", c.API, c.TokenRef, c.Insecure, c.CARef)
		if err != nil {
			return nil, err
		}
		return pullrequest.GitLab(c.API, c.Project, token, c.Labels, c.PullRequestState, hc)
	case gen.Gitea != nil:
		c := gen.Gitea
		token, hc, err := g.reach("pullRequest.gitea", c.API, c.TokenRef, c.Insecure, nil)
		if err != nil {
			return nil, err
		}
		return pullrequest.Gitea(c.API, c.Owner, c.Repo, token, c.Labels, hc)
	case gen.BitbucketServer != nil:
		c := gen.BitbucketServer
		_, hc, err := g.reach("pullRequest.bitbucketServer", c.API, nil, c.Insecure, c.CARef)
		if err != nil {
			return nil, err
		}
		auth, err := g.bitbucketAuth("pullRequest.bitbucketServer", c.BasicAuth, c.BearerToken)
		if err != nil {
			return nil, err
		}
		return pullrequest.BitbucketServer(c.API, c.Project, c.Repo, pullrequest.Auth(auth), hc)
	case gen.Bitbucket != nil:
		c := gen.Bitbucket
		_, hc, err := g.reach("pullRequest.bitbucket", c.API, nil, false, nil)
		if err != nil {
			return nil, err
		}
		auth, err := g.bitbucketAuth("pullRequest.bitbucket", c.BasicAuth, c.BearerToken)
		if err != nil {
			return nil, err
		}
		return pullrequest.BitbucketCloud(c.API, c.Owner, c.Repo, pullrequest.Auth(auth), hc)
	case gen.AzureDevOps != nil:
		c := gen.AzureDevOps
		token, hc, err := g.reach("pullRequest.azuredevops", c.API, c.TokenRef, false, nil)
		if err != nil {
			return nil, err
		}
		return pullrequest.AzureDevOps(c.API, c.Organization, c.Project, c.Repo, token, c.Labels, hc)
	}
	return nil, errors.New("the pullRequest generator names no provider")
}

// secretRef reads a token a generator names from a Secret of the
// ApplicationSet's namespace ("" when none is named), as a tenant's field
// may (settings.SecretScope): never argocd-secret nor a repository or
// cluster Secret, and in token reference strict mode only a Secret
// labelled as SCM credentials.
func (g *generation) secretRef(ref *v1alpha1.SecretRef, field string) (string, error) {
	if ref == nil {
		return "", nil
	}
	if g.src.Reader == nil {
		return "", fmt.Errorf("%s: no client to read Secrets", field)
	}
	scope := settings.SecretScope{Namespace: g.appset.Namespace, Field: field}
	s, err := scope.Read(g.ctx, g.src.Reader, g.appset.Namespace, ref.SecretName)
	if err != nil {
		return "", err
	}
	if g.src.SCM.TokenRefStrict && s.Labels[v1alpha1.LabelSecretType] != v1alpha1.SecretTypeSCMCreds {
		return "", fmt.Errorf("%s: secret %s/%s is not a valid SCM creds secret: it lacks the label %s=%s (token reference strict mode)",
			field, s.Namespace, s.Name, v1alpha1.LabelSecretType, v1alpha1.SecretTypeSCMCreds)
	}
	return secretValue(s, ref.Key)
}

// secretKey reads one key of a Secret the settings name (a plugin's token
// in the control namespace). Errors name the Secret and key, never the
// value.
func (g *generation) secretKey(namespace, name, key string) (string, error) {
	var s corev1.Secret
	if err := g.src.Reader.Get(g.ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		return "", fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	}
	return secretValue(&s, key)
}

func secretValue(s *corev1.Secret, key string) (string, error) {
	v, ok := s.Data[key]
	if !ok {
		return "", fmt.Errorf("key %q missing from Secret %s/%s", key, s.Namespace, s.Name)
	}
	return string(v), nil
}

// slugOf makes a branch name DNS-friendly as Argo CD does: gosimple/slug
// with underscores as dashes, cut to 50 characters at the last dash that
// fits (the library's smart truncation, done here rather than through its
// package-wide settings).
func slugOf(branch string) string {
	s := slug.Make(strings.ReplaceAll(branch, "_", "-"))
	if len(s) <= maxSlug {
		return s
	}
	for i := maxSlug; i >= 0; i-- {
		if s[i] == '-' {
			return s[:i]
		}
	}
	return s[:maxSlug]
}

func prefix(s string, n int) string { return s[:min(len(s), n)] }
