package scm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/codecommit"
	cctypes "github.com/aws/aws-sdk-go-v2/service/codecommit/types"
	"github.com/aws/aws-sdk-go-v2/service/resourcegroupstaggingapi"
	tagtypes "github.com/aws/aws-sdk-go-v2/service/resourcegroupstaggingapi/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// codeCommitResourceType is CodeCommit repositories' type in the Resource
// Groups Tagging API.
const codeCommitResourceType = "codecommit:repository"

// codeCommitBatch is the most repositories BatchGetRepositories takes.
const codeCommitBatch = 25

// Starts of CodeCommit's https clone URLs, plain and FIPS.
const (
	codeCommitHTTPS     = "https://git-codecommit."
	codeCommitHTTPSFIPS = "https://git-codecommit-fips."
)

// CodeCommitOptions choose the AWS account, region and repositories the
// CodeCommit provider reads.
type CodeCommitOptions struct {
	// Region is the AWS region; empty takes the SDK's default chain
	// (AWS_REGION, the shared configuration).
	Region string
	// Role is the ARN of an IAM role assumed through STS for every call;
	// empty uses the controller's own identity.
	Role string
	// TagFilters keep the repositories with these tags, through the
	// Resource Groups Tagging API: every key must be present, with one of
	// its values when any is given.
	TagFilters []*v1alpha1.TagFilter
	// Endpoint replaces the base endpoint of every AWS service called
	// (tests); empty: AWS's own.
	Endpoint string
	// HTTP carries every call; nil: the SDK's client with DefaultTimeout.
	// A given client cannot take AWS_CA_BUNDLE (the SDK refuses it).
	HTTP *http.Client
}

// codeCommit reads the CodeCommit repositories of one account and region.
type codeCommit struct {
	repos   *codecommit.Client
	tagging *resourcegroupstaggingapi.Client
	filters []tagtypes.TagFilter
}

// CodeCommit returns the Provider of the CodeCommit repositories the
// options' identity sees in their region, through the AWS SDK. A
// repository's Organization is its AWS account, its Labels its tags
// ("key=value", or "key" for an empty value); repositories without a
// default branch (empty ones) are left out, as in Argo CD. Clone
// protocols are ssh, https and https-fips.
func CodeCommit(ctx context.Context, opts CodeCommitOptions) (Provider, error) {
	load := []func(*config.LoadOptions) error{config.WithHTTPClient(awsHTTP(opts.HTTP))}
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("AWS CodeCommit: loading the AWS configuration: %w", err)
	}
	endpoint := func(base **string) {
		if opts.Endpoint != "" {
			*base = aws.String(opts.Endpoint)
		}
	}
	if opts.Role != "" {
		client := sts.NewFromConfig(cfg, func(o *sts.Options) { endpoint(&o.BaseEndpoint) })
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(client, opts.Role))
	}
	return &codeCommit{
		repos:   codecommit.NewFromConfig(cfg, func(o *codecommit.Options) { endpoint(&o.BaseEndpoint) }),
		tagging: resourcegroupstaggingapi.NewFromConfig(cfg, func(o *resourcegroupstaggingapi.Options) { endpoint(&o.BaseEndpoint) }),
		filters: tagFilters(opts.TagFilters),
	}, nil
}

// awsHTTP is the client of every AWS call: hc, else the SDK's own with
// DefaultTimeout, which unlike a plain client can take the CA bundle of
// AWS_CA_BUNDLE.
func awsHTTP(hc *http.Client) config.HTTPClient {
	if hc != nil {
		return hc
	}
	return awshttp.NewBuildableClient().WithTimeout(DefaultTimeout)
}

// tagFilters merges the generator's tag filters by key, in their order.
func tagFilters(in []*v1alpha1.TagFilter) []tagtypes.TagFilter {
	var out []tagtypes.TagFilter
	for _, f := range in {
		if f == nil {
			continue
		}
		i := slices.IndexFunc(out, func(t tagtypes.TagFilter) bool { return aws.ToString(t.Key) == f.Key })
		if i < 0 {
			out = append(out, tagtypes.TagFilter{Key: aws.String(f.Key)})
			i = len(out) - 1
		}
		if f.Value != "" {
			out[i].Values = append(out[i].Values, f.Value)
		}
	}
	return out
}

// Repositories implements Provider: the repositories the tag filters
// keep, or all of them without filters.
func (c *codeCommit) Repositories(ctx context.Context, protocol string) ([]Repository, error) {
	tags, names, err := c.tagged(ctx)
	if err != nil {
		return nil, err
	}
	if len(c.filters) == 0 {
		if names, err = c.names(ctx); err != nil {
			return nil, err
		}
	}
	metas, err := c.metadata(ctx, names)
	if err != nil {
		return nil, err
	}
	var out []Repository
	for _, m := range metas {
		if aws.ToString(m.DefaultBranch) == "" {
			continue
		}
		url, err := codeCommitURL(protocol, aws.ToString(m.CloneUrlSsh), aws.ToString(m.CloneUrlHttp))
		if err != nil {
			return nil, fmt.Errorf("AWS CodeCommit repository %s: %w", aws.ToString(m.RepositoryName), err)
		}
		out = append(out, Repository{Organization: aws.ToString(m.AccountId), Repository: aws.ToString(m.RepositoryName), URL: url,
			Branch: aws.ToString(m.DefaultBranch), Labels: tags[aws.ToString(m.RepositoryName)]})
	}
	return out, nil
}

// tagged lists, through the tagging API, the tagged repositories the
// filters keep: each one's labels, and their names in order.
func (c *codeCommit) tagged(ctx context.Context) (map[string][]string, []string, error) {
	what := "AWS CodeCommit tagged repositories"
	mappings, err := tokenPages(MaxRepositories, what, func(token string) ([]tagtypes.ResourceTagMapping, string, error) {
		in := &resourcegroupstaggingapi.GetResourcesInput{ResourceTypeFilters: []string{codeCommitResourceType}, TagFilters: c.filters,
			ResourcesPerPage: aws.Int32(pageSize)}
		if token != "" {
			in.PaginationToken = aws.String(token)
		}
		page, err := c.tagging.GetResources(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("%s: listing through the Resource Groups Tagging API: %w", what, err)
		}
		return page.ResourceTagMappingList, aws.ToString(page.PaginationToken), nil
	})
	if err != nil {
		return nil, nil, err
	}
	labels := map[string][]string{}
	var names []string
	for _, m := range mappings {
		a, err := arn.Parse(aws.ToString(m.ResourceARN))
		if err != nil {
			continue
		}
		var ls []string
		for _, t := range m.Tags {
			l := aws.ToString(t.Key)
			if v := aws.ToString(t.Value); v != "" {
				l += "=" + v
			}
			ls = append(ls, l)
		}
		if _, seen := labels[a.Resource]; !seen {
			names = append(names, a.Resource)
		}
		labels[a.Resource] = ls
	}
	return labels, names, nil
}

// names lists every repository's name.
func (c *codeCommit) names(ctx context.Context) ([]string, error) {
	what := "AWS CodeCommit repositories"
	repos, err := tokenPages(MaxRepositories, what, func(token string) ([]cctypes.RepositoryNameIdPair, string, error) {
		in := &codecommit.ListRepositoriesInput{}
		if token != "" {
			in.NextToken = aws.String(token)
		}
		page, err := c.repos.ListRepositories(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("%s: listing: %w", what, err)
		}
		return page.Repositories, aws.ToString(page.NextToken), nil
	})
	names := make([]string, 0, len(repos))
	for _, r := range repos {
		names = append(names, aws.ToString(r.RepositoryName))
	}
	return names, err
}

// metadata reads the repositories' metadata in names' order, a batch at
// a time; repositories gone since they were listed are left out.
func (c *codeCommit) metadata(ctx context.Context, names []string) ([]cctypes.RepositoryMetadata, error) {
	var out []cctypes.RepositoryMetadata
	for batch := range slices.Chunk(names, codeCommitBatch) {
		page, err := c.repos.BatchGetRepositories(ctx, &codecommit.BatchGetRepositoriesInput{RepositoryNames: batch})
		if err != nil {
			return nil, fmt.Errorf("AWS CodeCommit repositories %s: reading: %w", strings.Join(batch, ", "), err)
		}
		for _, name := range batch {
			i := slices.IndexFunc(page.Repositories, func(m cctypes.RepositoryMetadata) bool { return aws.ToString(m.RepositoryName) == name })
			if i >= 0 {
				out = append(out, page.Repositories[i])
			}
		}
	}
	return out, nil
}

// codeCommitURL picks the clone URL of a protocol: ssh (the default),
// https, or https-fips (the https URL on the FIPS endpoint).
func codeCommitURL(protocol, ssh, https string) (string, error) {
	if protocol != "https-fips" {
		return cloneURL(protocol, ssh, https)
	}
	if strings.HasPrefix(https, codeCommitHTTPSFIPS) {
		return https, nil
	}
	if rest, ok := strings.CutPrefix(https, codeCommitHTTPS); ok {
		return codeCommitHTTPSFIPS + rest, nil
	}
	return "", fmt.Errorf("clone URL %s has no FIPS endpoint", https)
}

// Branches implements Provider; each branch's commit takes a GetBranch.
func (c *codeCommit) Branches(ctx context.Context, repo Repository, all bool) ([]Repository, error) {
	where := fmt.Sprintf("AWS CodeCommit repository %s/%s", repo.Organization, repo.Repository)
	names := []string{repo.Branch}
	if all {
		var err error
		names, err = tokenPages(MaxBranches, where+" branches", func(token string) ([]string, string, error) {
			in := &codecommit.ListBranchesInput{RepositoryName: aws.String(repo.Repository)}
			if token != "" {
				in.NextToken = aws.String(token)
			}
			page, err := c.repos.ListBranches(ctx, in)
			if err != nil {
				return nil, "", fmt.Errorf("%s: listing branches: %w", where, err)
			}
			return page.Branches, aws.ToString(page.NextToken), nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]Repository, 0, len(names))
	for _, name := range names {
		b, err := c.repos.GetBranch(ctx, &codecommit.GetBranchInput{RepositoryName: aws.String(repo.Repository), BranchName: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("%s: reading branch %s: %w", where, name, err)
		}
		r := repo
		r.Branch = name
		if b.Branch != nil {
			r.SHA = aws.ToString(b.Branch.CommitId)
		}
		out = append(out, r)
	}
	return out, nil
}

// HasPath implements Provider as Argo CD does: the path's folder is read
// on the branch (GetFolder, which unlike GetFile downloads no blob) and
// the path looked for among its files, folders, links and submodules.
func (c *codeCommit) HasPath(ctx context.Context, repo Repository, p string) (bool, error) {
	p = path.Clean("/" + p)
	if p == "/" {
		return true, nil
	}
	dir, base := path.Dir(p), path.Base(p)
	folder, err := c.repos.GetFolder(ctx, &codecommit.GetFolderInput{RepositoryName: aws.String(repo.Repository),
		CommitSpecifier: aws.String(repo.Branch), FolderPath: aws.String(dir)})
	if codeCommitMissing(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("AWS CodeCommit repository %s/%s: reading %s on %s: %w", repo.Organization, repo.Repository, dir, repo.Branch, err)
	}
	var entries []*string
	for _, f := range folder.Files {
		entries = append(entries, f.RelativePath)
	}
	for _, f := range folder.SubFolders {
		entries = append(entries, f.RelativePath)
	}
	for _, l := range folder.SymbolicLinks {
		entries = append(entries, l.RelativePath)
	}
	for _, m := range folder.SubModules {
		entries = append(entries, m.RelativePath)
	}
	return slices.ContainsFunc(entries, func(e *string) bool { return aws.ToString(e) == base }), nil
}

// codeCommitMissing tells the errors of a missing repository, commit or
// folder.
func codeCommitMissing(err error) bool {
	var repo *cctypes.RepositoryDoesNotExistException
	var commit *cctypes.CommitDoesNotExistException
	var folder *cctypes.FolderDoesNotExistException
	return errors.As(err, &repo) || errors.As(err, &commit) || errors.As(err, &folder)
}

// tokenPages gathers a listing paged by continuation tokens through
// pages: fetch reads the page a token names ("" the first) and returns
// the next page's token ("" after the last). Empty pages count against
// limit too, so an endless chain of them ends.
func tokenPages[T any](limit int, what string, fetch func(token string) ([]T, string, error)) ([]T, error) {
	tokens := []string{""}
	return pages(limit, what, func(page int) ([]T, int, error) {
		if page > limit {
			return nil, 0, fmt.Errorf("%s: more than %d pages; the generator stops there", what, limit)
		}
		items, next, err := fetch(tokens[page-1])
		if err != nil || next == "" {
			return items, 0, err
		}
		tokens = append(tokens, next)
		return items, len(tokens), nil
	})
}
