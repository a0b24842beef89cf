package applicationset

import (
	"errors"
	"fmt"
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
		tokenRef := c.TokenRef
		if c.AppSecretName != "" { // the app's credentials instead, as in Argo CD
			tokenRef = nil
		}
		token, hc, err := g.reach("scmProvider.github", c.API, tokenRef, false, nil)
		if err == nil && c.AppSecretName != "" {
			hc, err = g.githubAppClient("scmProvider.github", c.AppSecretName, c.API, c.Organization, hc)
		}
		if err != nil {
			return nil, false, err
		}
		p, err := scm.GitHub(c.API, c.Organization, token, c.ExcludeArchivedRepos, g.countedGitHub(hc))
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
		c := gen.Bitbucket
		_, hc, err := g.reach("scmProvider.bitbucket", "", nil, false, nil)
		if err != nil {
			return nil, false, err
		}
		auth, err := g.bitbucketAuth("scmProvider.bitbucket", &v1alpha1.BasicAuthBitbucketServer{Username: c.User, PasswordRef: c.AppPasswordRef}, nil)
		if err != nil {
			return nil, false, err
		}
		p, err := scm.BitbucketCloud(g.src.Endpoints.BitbucketCloud, c.Owner, auth, c.AllBranches, hc)
		return p, c.AllBranches, err
	case gen.BitbucketServer != nil:
		c := gen.BitbucketServer
		_, hc, err := g.reach("scmProvider.bitbucketServer", c.API, nil, c.Insecure, c.CARef)
		if err != nil {
			return nil, false, err
		}
		auth, err := g.bitbucketAuth("scmProvider.bitbucketServer", c.BasicAuth, c.BearerToken)
		if err != nil {
			return nil, false, err
		}
		p, err := scm.BitbucketServer(c.API, c.Project, auth, c.AllBranches, hc)
		return p, c.AllBranches, err
	case gen.AzureDevOps != nil:
		c := gen.AzureDevOps
		token, hc, err := g.reach("scmProvider.azureDevOps", c.API, c.AccessTokenRef, false, nil)
		if err != nil {
			return nil, false, err
		}
		p, err := scm.AzureDevOps(c.API, c.Organization, c.TeamProject, token, hc)
		return p, c.AllBranches, err
	case gen.AWSCodeCommit != nil:
		c := gen.AWSCodeCommit
		if err := g.src.SCM.allows(""); err != nil {
			return nil, false, fmt.Errorf("scmProvider.awsCodeCommit: %w", err)
		}
		// The AWS SDK retries and paces its own calls; its client stays
		// the SDK's unless extra roots are trusted.
		hc, err := g.providerHTTP(false, nil, "scmProvider.awsCodeCommit")
		if err != nil {
			return nil, false, err
		}
		p, err := scm.CodeCommit(g.ctx, scm.CodeCommitOptions{Region: c.Region, Role: c.Role, TagFilters: c.TagFilters,
			Endpoint: g.src.Endpoints.AWS, HTTP: hc})
		return p, c.AllBranches, err
	}
	return nil, false, errors.New("the scmProvider generator names no provider")
}

// bitbucketAuth reads a Bitbucket generator's credentials: a bearer token,
// else a user name and password (Cloud: app password), else none.
func (g *generation) bitbucketAuth(field string, basic *v1alpha1.BasicAuthBitbucketServer, bearer *v1alpha1.BearerTokenBitbucket) (scm.Auth, error) {
	switch {
	case bearer != nil:
		token, err := g.secretRef(bearer.TokenRef, field+".bearerToken.tokenRef")
		return scm.Auth{BearerToken: token}, err
	case basic != nil:
		password, err := g.secretRef(basic.PasswordRef, field+".basicAuth.passwordRef")
		return scm.Auth{Username: basic.Username, Password: password}, err
	}
	return scm.Auth{}, nil
}
