package repo

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// Renderer turns sources into objects. Service implements it in-process.
type Renderer interface {
	Render(ctx context.Context, req *Request) (*Response, error)
}

// Request is one Application's sources to render.
type Request struct {
	// AppName is the Application's name: the default Helm release name and
	// the suffix of .argocd-source-<app>.yaml override files.
	AppName string
	// Namespace is the destination namespace.
	Namespace string
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
}

// Credentials finds the credentials for a repository URL, from repository
// Secrets and credential templates.
type Credentials interface {
	ForRepo(ctx context.Context, url string) (git.Creds, error)
}

// NoCredentials is a Credentials that has none: public and file:// repositories.
type NoCredentials struct{}

// ForRepo returns empty credentials.
func (NoCredentials) ForRepo(context.Context, string) (git.Creds, error) { return git.Creds{}, nil }
