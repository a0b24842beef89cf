package v1alpha1

// SecretRef is a key of a Secret in the ApplicationSet's namespace.
type SecretRef struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
}

// ConfigMapKeyRef is a key of a ConfigMap in the ApplicationSet's namespace.
type ConfigMapKeyRef struct {
	ConfigMapName string `json:"configMapName"`
	Key           string `json:"key"`
}

// BasicAuthBitbucketServer is a user name and a password from a Secret.
type BasicAuthBitbucketServer struct {
	Username    string     `json:"username"`
	PasswordRef *SecretRef `json:"passwordRef"`
}

// BearerTokenBitbucket is a bearer token from a Secret.
type BearerTokenBitbucket struct {
	TokenRef *SecretRef `json:"tokenRef"`
}

// SCMProviderGenerator yields one parameter set per repository (or
// branch) an SCM provider lists for an organization.
type SCMProviderGenerator struct {
	// +optional
	Github *SCMProviderGeneratorGithub `json:"github,omitempty"`
	// +optional
	Gitlab *SCMProviderGeneratorGitlab `json:"gitlab,omitempty"`
	// +optional
	Bitbucket *SCMProviderGeneratorBitbucket `json:"bitbucket,omitempty"`
	// +optional
	BitbucketServer *SCMProviderGeneratorBitbucketServer `json:"bitbucketServer,omitempty"`
	// +optional
	Gitea *SCMProviderGeneratorGitea `json:"gitea,omitempty"`
	// +optional
	AzureDevOps *SCMProviderGeneratorAzureDevOps `json:"azureDevOps,omitempty"`
	// +optional
	AWSCodeCommit *SCMProviderGeneratorAWSCodeCommit `json:"awsCodeCommit,omitempty"`
	// Filters keep repositories matching any one filter (all of its conditions).
	// +optional
	Filters []SCMProviderGeneratorFilter `json:"filters,omitempty"`
	// CloneProtocol is "ssh" (default) or "https".
	// +optional
	CloneProtocol string `json:"cloneProtocol,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// SCMProviderGeneratorGithub lists a GitHub organization's repositories.
type SCMProviderGeneratorGithub struct {
	Organization string `json:"organization"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AppSecretName string `json:"appSecretName,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
	// +optional
	ExcludeArchivedRepos bool `json:"excludeArchivedRepos,omitempty"`
}

// SCMProviderGeneratorGitlab lists a GitLab group's projects.
type SCMProviderGeneratorGitlab struct {
	Group string `json:"group"`
	// +optional
	IncludeSubgroups bool `json:"includeSubgroups,omitempty"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	IncludeSharedProjects *bool `json:"includeSharedProjects,omitempty"`
	// +optional
	Topic string `json:"topic,omitempty"`
	// +optional
	CARef *ConfigMapKeyRef `json:"caRef,omitempty"`
	// +optional
	IncludeArchivedRepos bool `json:"includeArchivedRepos,omitempty"`
}

// SCMProviderGeneratorGitea lists a Gitea owner's repositories.
type SCMProviderGeneratorGitea struct {
	Owner string `json:"owner"`
	API   string `json:"api"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	ExcludeArchivedRepos bool `json:"excludeArchivedRepos,omitempty"`
}

// SCMProviderGeneratorBitbucketServer lists a Bitbucket Server project's repositories.
type SCMProviderGeneratorBitbucketServer struct {
	Project string `json:"project"`
	API     string `json:"api"`
	// +optional
	BasicAuth *BasicAuthBitbucketServer `json:"basicAuth,omitempty"`
	// +optional
	BearerToken *BearerTokenBitbucket `json:"bearerToken,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
	// +optional
	CARef *ConfigMapKeyRef `json:"caRef,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
}

// SCMProviderGeneratorBitbucket lists a Bitbucket Cloud workspace's repositories.
type SCMProviderGeneratorBitbucket struct {
	Owner          string     `json:"owner"`
	User           string     `json:"user"`
	AppPasswordRef *SecretRef `json:"appPasswordRef"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
}

// SCMProviderGeneratorAzureDevOps lists an Azure DevOps team project's repositories.
type SCMProviderGeneratorAzureDevOps struct {
	Organization string `json:"organization"`
	// +optional
	API            string     `json:"api,omitempty"`
	TeamProject    string     `json:"teamProject"`
	AccessTokenRef *SecretRef `json:"accessTokenRef"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
}

// SCMProviderGeneratorAWSCodeCommit lists AWS CodeCommit repositories.
type SCMProviderGeneratorAWSCodeCommit struct {
	// +optional
	TagFilters []*TagFilter `json:"tagFilters,omitempty"`
	// +optional
	Role string `json:"role,omitempty"`
	// +optional
	Region string `json:"region,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
}

// TagFilter is an AWS resource tag to match.
type TagFilter struct {
	Key string `json:"key"`
	// +optional
	Value string `json:"value,omitempty"`
}

// SCMProviderGeneratorFilter keeps repositories that meet all its conditions.
type SCMProviderGeneratorFilter struct {
	// +optional
	RepositoryMatch *string `json:"repositoryMatch,omitempty"`
	// +optional
	PathsExist []string `json:"pathsExist,omitempty"`
	// +optional
	PathsDoNotExist []string `json:"pathsDoNotExist,omitempty"`
	// +optional
	LabelMatch *string `json:"labelMatch,omitempty"`
	// +optional
	BranchMatch *string `json:"branchMatch,omitempty"`
}

// PullRequestGenerator yields one parameter set per open pull request.
type PullRequestGenerator struct {
	// +optional
	Github *PullRequestGeneratorGithub `json:"github,omitempty"`
	// +optional
	GitLab *PullRequestGeneratorGitLab `json:"gitlab,omitempty"`
	// +optional
	Gitea *PullRequestGeneratorGitea `json:"gitea,omitempty"`
	// +optional
	BitbucketServer *PullRequestGeneratorBitbucketServer `json:"bitbucketServer,omitempty"`
	// +optional
	Bitbucket *PullRequestGeneratorBitbucket `json:"bitbucket,omitempty"`
	// +optional
	AzureDevOps *PullRequestGeneratorAzureDevOps `json:"azuredevops,omitempty"`
	// +optional
	Filters []PullRequestGeneratorFilter `json:"filters,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// ContinueOnRepoNotFoundError yields no parameters, instead of an
	// error, when the repository does not exist.
	// +optional
	ContinueOnRepoNotFoundError bool `json:"continueOnRepoNotFoundError,omitempty"`
}

// PullRequestGeneratorGithub lists a GitHub repository's pull requests.
type PullRequestGeneratorGithub struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AppSecretName string `json:"appSecretName,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// PullRequestGeneratorGitLab lists a GitLab project's merge requests.
type PullRequestGeneratorGitLab struct {
	Project string `json:"project"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
	// +optional
	PullRequestState string `json:"pullRequestState,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	CARef *ConfigMapKeyRef `json:"caRef,omitempty"`
}

// PullRequestGeneratorGitea lists a Gitea repository's pull requests.
type PullRequestGeneratorGitea struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	API   string `json:"api"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// PullRequestGeneratorBitbucketServer lists a Bitbucket Server repository's pull requests.
type PullRequestGeneratorBitbucketServer struct {
	Project string `json:"project"`
	Repo    string `json:"repo"`
	API     string `json:"api"`
	// +optional
	BasicAuth *BasicAuthBitbucketServer `json:"basicAuth,omitempty"`
	// +optional
	BearerToken *BearerTokenBitbucket `json:"bearerToken,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	CARef *ConfigMapKeyRef `json:"caRef,omitempty"`
}

// PullRequestGeneratorBitbucket lists a Bitbucket Cloud repository's pull requests.
type PullRequestGeneratorBitbucket struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	BasicAuth *BasicAuthBitbucketServer `json:"basicAuth,omitempty"`
	// +optional
	BearerToken *BearerTokenBitbucket `json:"bearerToken,omitempty"`
}

// PullRequestGeneratorAzureDevOps lists an Azure DevOps repository's pull requests.
type PullRequestGeneratorAzureDevOps struct {
	Organization string `json:"organization"`
	Project      string `json:"project"`
	Repo         string `json:"repo"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// PullRequestGeneratorFilter keeps pull requests that meet all its conditions.
type PullRequestGeneratorFilter struct {
	// +optional
	BranchMatch *string `json:"branchMatch,omitempty"`
	// +optional
	TargetBranchMatch *string `json:"targetBranchMatch,omitempty"`
	// +optional
	TitleMatch *string `json:"titleMatch,omitempty"`
}
