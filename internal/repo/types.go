package repo

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cloudauth"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// Renderer turns sources into objects, and tells what a source's target
// revision points at now. Service implements it in-process.
type Renderer interface {
	Render(ctx context.Context, req *Request) (*Response, error)
	// Resolve asks the repository afresh (no reuse of a recent ls-remote
	// or chart index) which commit or chart version a revision means.
	Resolve(ctx context.Context, req *ResolveRequest) (*ResolveResponse, error)
}

// ResolveRequest names one source's revision: a Git branch, tag or commit,
// or a Helm chart version or constraint.
type ResolveRequest struct {
	RepoURL string `json:"repoURL"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
	// Chart is set for Helm repository sources.
	Chart    string `json:"chart,omitempty"`
	Revision string `json:"revision"`
	// TagPrefix narrows a version constraint to the tags with this prefix
	// (the source's tagPrefix).
	TagPrefix string `json:"tagPrefix,omitempty"`
	// Credentials, when set, are used instead of those stored for the
	// repository: the API server tests a repository before storing it.
	// The trusted certificates and SSH host keys still come from settings.
	Credentials *TestCredentials `json:"credentials,omitempty"`
}

// TestCredentials are credentials not stored yet.
type TestCredentials struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	SSHPrivateKey string `json:"sshPrivateKey,omitempty"`
	Insecure      bool   `json:"insecure,omitempty"`
	TLSClientCert string `json:"tlsClientCert,omitempty"`
	TLSClientKey  string `json:"tlsClientKey,omitempty"`
	BearerToken   string `json:"bearerToken,omitempty"`
	Proxy         string `json:"proxy,omitempty"`
	NoProxy       string `json:"noProxy,omitempty"`
	// Cloud, when set, buys the token the repository is reached with
	// here, in the repo server, which holds the Azure workload identity.
	Cloud *cloudauth.Credentials `json:"cloud,omitempty"`
}

// apply puts the credentials in place of creds', keeping the trusted
// certificates and SSH host keys settings give; cloud credentials buy
// their token for the repository at repoURL.
func (c *TestCredentials) apply(ctx context.Context, creds *git.Creds, repoURL string) error {
	ca, known := creds.CAData, creds.KnownHosts
	*creds = git.Creds{Username: c.Username, Password: c.Password, SSHPrivateKey: c.SSHPrivateKey, Insecure: c.Insecure,
		TLSClientCert: c.TLSClientCert, TLSClientKey: c.TLSClientKey, BearerToken: c.BearerToken, Proxy: c.Proxy, NoProxy: c.NoProxy,
		CAData: ca, KnownHosts: known}
	if c.Cloud == nil {
		return nil
	}
	bought, err := cloudauth.Default.Buy(ctx, *c.Cloud, repoURL, false)
	creds.Username, creds.Password, creds.BearerToken, creds.Identity = bought.Username, bought.Password, bought.BearerToken, bought.Identity
	return err
}

// ResolveResponse is what a revision resolved to.
type ResolveResponse struct {
	// Revision is the commit SHA (Git) or chart version (Helm).
	Revision string `json:"revision"`
}

// Request is one Application's sources to render.
type Request struct {
	// AppName is the Application's name: the default Helm release name and
	// the suffix of .argocd-source-<app>.yaml override files.
	AppName string
	// Namespace is the destination namespace.
	Namespace string
	// Project is the Application's project (ARGOCD_APP_PROJECT_NAME).
	Project string
	// Sources are the Application's sources: spec.source alone, or spec.sources.
	Sources []v1alpha1.ApplicationSource
	// Revisions, when set, override each source's targetRevision (a sync to
	// an older revision, a rollback). Empty entries keep targetRevision.
	Revisions []string
	// KubeVersion and APIVersions are the destination cluster's, for Helm's
	// .Capabilities; a source's own helm.kubeVersion/apiVersions win.
	KubeVersion string
	APIVersions []string
	// NoCache renders afresh and re-resolves revisions (a hard refresh).
	NoCache bool
	// NoRevisionCache re-resolves branches and tags now instead of reusing
	// a recent ls-remote (a normal refresh, a webhook).
	NoRevisionCache bool
	// VerifySignature returns each Git source's commit as signed, for the
	// caller to check against the keys its project allows.
	VerifySignature bool
	// VerifyHistory checks each Git source's commit and its ancestors, to
	// their seal commits, against the keys it holds (strict source
	// integrity): SourceResult.History. Nil: no history is checked.
	VerifyHistory *HistoryCheck
	// KustomizeBuildOptions are argocd-cm's kustomize.buildOptions.
	KustomizeBuildOptions string
	// KustomizeVersions are argocd-cm's Kustomize programs by version,
	// for sources whose kustomize.version names one.
	KustomizeVersions []v1alpha1.KustomizeVersion
	// HelmValuesFileSchemes are argocd-cm's helm.valuesFileSchemes (nil:
	// Argo CD's default, see helm.DefaultValuesFileSchemes).
	HelmValuesFileSchemes []string
	// DisabledTools are the tools argocd-cm turns off (ToolHelm,
	// ToolKustomize, ToolJsonnet, from its <tool>.enable keys): a source
	// Helm or Kustomize would render is rendered as a plain directory, and
	// Jsonnet files are left out, as in Argo CD. Default none.
	DisabledTools []string
	// ManifestGeneratePaths is the Application's
	// argocd.argoproj.io/manifest-generate-paths annotation: with the
	// plugins' UseManifestGeneratePaths, a plugin is sent only the
	// directory holding the source and those paths. Default none.
	ManifestGeneratePaths string
}

// The tools argocd-cm can turn off, named as its <tool>.enable keys.
const (
	ToolHelm      = "helm"
	ToolKustomize = "kustomize"
	ToolJsonnet   = "jsonnet"
)

// RequestFor is the request rendering app's sources at their target
// revisions: its name, destination namespace and project.
func RequestFor(app *v1alpha1.Application) *Request {
	return &Request{AppName: app.Name, Namespace: app.Spec.Destination.Namespace, Project: app.Spec.Project, Sources: app.Spec.GetSources(),
		ManifestGeneratePaths: app.Annotations[v1alpha1.AnnotationManifestGeneratePaths]}
}

// Response is what rendering produced.
type Response struct {
	// Objects are the rendered objects of all sources, in source order.
	Objects []*unstructured.Unstructured `json:"objects"`
	// Sources describe each source of the request, in order.
	Sources []SourceResult `json:"sources"`
	// Images are the distinct container images the objects name, sorted.
	Images []string `json:"images"`
}

// SourceResult describes one rendered source.
type SourceResult struct {
	// Revision is the resolved commit SHA (Git) or chart version (Helm).
	Revision string `json:"revision"`
	// Type is how the source was rendered; empty for ref-only sources.
	Type v1alpha1.ApplicationSourceType `json:"type,omitempty"`
	// Signed is the Git commit and its signature, when the request asked
	// to verify signatures.
	Signed *git.Signed `json:"signed,omitempty"`
	// History is each commit checked for VerifyHistory, newest first.
	History []git.CommitCheck `json:"history,omitempty"`
}

// HistoryCheck is a strict signature check of Git histories.
type HistoryCheck struct {
	// Keys are the ASCII-armored public keys signatures are checked
	// against (argocd-gpg-keys-cm's).
	Keys []string `json:"keys"`
	// RepoURLs are the repositories whose histories are checked (those
	// a strict policy governs); other sources are not.
	RepoURLs []string `json:"repoURLs"`
}

// covers reports whether the check is for repoURL's history.
func (h *HistoryCheck) covers(repoURL string) bool {
	return h != nil && slices.ContainsFunc(h.RepoURLs, func(u string) bool { return git.NormalizeURL(u) == git.NormalizeURL(repoURL) })
}

// MaxVerifiedHistory bounds the commits one history check reads: past it
// the check fails, and the history needs a seal commit.
const MaxVerifiedHistory = 10000

// Credentials finds the credentials for a repository URL, from repository
// Secrets and credential templates: those of project first, then those of
// no project; never another project's.
type Credentials interface {
	ForRepo(ctx context.Context, url, project string) (git.Creds, error)
}

// RepoNames finds the URL of the repository Secret named name (its "name"
// key), as a Helm dependency's "@name" or "alias:name" refers to it:
// project's first, then those of no project. Credentials that implement
// it let charts use such aliases.
type RepoNames interface {
	URLByName(ctx context.Context, name, project string) (string, error)
}

// NoCredentials is a Credentials that has none: public and file:// repositories.
type NoCredentials struct{}

// ForRepo returns empty credentials.
func (NoCredentials) ForRepo(context.Context, string, string) (git.Creds, error) {
	return git.Creds{}, nil
}

// Change is a push to a repository, as a Git webhook (or Capstan's own
// Git write-back) reports it.
type Change struct {
	// URL is the repository, as the sender names it.
	URL string
	// Files are the paths the push changed, relative to the repository's
	// root; nil when the sender did not list them (then every Application
	// following the repository is refreshed).
	Files []string
}
