package applicationset

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset/scm"
)

// DefaultSCMProviderRequeueAfter is how often the SCM provider generator
// asks its provider again, as in Argo CD.
const DefaultSCMProviderRequeueAfter = 30 * time.Minute

// scmProvider yields one parameter set per repository branch the provider
// lists and the filters keep, with Argo CD's parameters.
func (g *generation) scmProvider(gen *v1alpha1.SCMProviderGenerator) ([]Params, error) {
	seconds := gen.RequeueAfterSeconds
	if seconds == nil {
		d := int64(DefaultSCMProviderRequeueAfter / time.Second)
		seconds = &d
	}
	g.wantRequeue(seconds)
	provider, allBranches, err := g.scmService(gen)
	if err != nil {
		return nil, err
	}
	repos, err := scm.List(g.ctx, provider, gen.Filters, gen.CloneProtocol, allBranches)
	if err != nil {
		return nil, err
	}
	var out []Params
	for _, r := range repos {
		p := Params{
			"organization": r.Organization, "repository": r.Repository, "repository_id": strconv.FormatInt(r.RepositoryID, 10),
			"url": r.URL, "branch": r.Branch, "branchNormalized": normalize(r.Branch),
			"sha": r.SHA, "short_sha": prefix(r.SHA, 8), "short_sha_7": prefix(r.SHA, 7),
			"labels": strings.Join(r.Labels, ","),
		}
		if p, err = g.withValues(p, gen.Values); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// scmService is the provider an SCM provider generator names, and whether
// it lists every branch.
func (g *generation) scmService(gen *v1alpha1.SCMProviderGenerator) (scm.Provider, bool, error) {
	switch {
	case gen.Github != nil:
		c := gen.Github
		if c.AppSecretName != "" {
			return nil, false, errors.New("scmProvider.github.appSecretName: GitHub App credentials are not supported by Capstan yet; use tokenRef")
		}
		token, hc, err := g.reach("scmProvider.github", c.API, c.TokenRef, false, nil)
		if err != nil {
			return nil, false, err
		}
		p, err := scm.GitHub(c.API, c.Organization, token, c.ExcludeArchivedRepos, hc)
		return p, c.AllBranches, err
	case gen.Gitlab != nil:
		c := gen.Gitlab
		token, hc, err := g.reach("scmProvider.gitlab", c.API, c.TokenRef, c.Insecure, c.CARef)
		if err != nil {
			return nil, false, err
		}
		p, err := scm.GitLab(c.API, c.Group, token, scm.GitLabOptions{IncludeSubgroups: c.IncludeSubgroups,
			IncludeSharedProjects: c.IncludeSharedProjects, Topic: c.Topic, IncludeArchived: c.IncludeArchivedRepos}, hc)
		return p, c.AllBranches, err
	case gen.Gitea != nil:
		c := gen.Gitea
		token, hc, err := g.reach("scmProvider.gitea", c.API, c.TokenRef, c.Insecure, nil)
		if err != nil {
			return nil, false, err
		}
		p, err := scm.Gitea(c.API, c.Owner, token, c.ExcludeArchivedRepos, hc)
		return p, c.AllBranches, err
	case gen.Bitbucket != nil:
		return nil, false, errUnsupported("scmProvider.bitbucket")
	case gen.BitbucketServer != nil:
		return nil, false, errUnsupported("scmProvider.bitbucketServer")
	case gen.AzureDevOps != nil:
		return nil, false, errUnsupported("scmProvider.azureDevOps")
	case gen.AWSCodeCommit != nil:
		return nil, false, errUnsupported("scmProvider.awsCodeCommit")
	}
	return nil, false, errors.New("the scmProvider generator names no provider")
}
