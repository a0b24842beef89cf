package ocisource

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/capstan-cd/capstan/internal/repo/git"
)

// Metadata is what an artifact's manifest annotations say of it, as Argo
// CD's OCIMetadata gives it (the image URL is left out, as Argo CD leaves
// it out).
type Metadata struct {
	CreatedAt   string `json:"createdAt,omitempty"`
	Authors     string `json:"authors,omitempty"`
	ImageURL    string `json:"imageUrl,omitempty"`
	DocsURL     string `json:"docsUrl,omitempty"`
	SourceURL   string `json:"sourceUrl,omitempty"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
}

// Metadata reads the annotations of the artifact a revision (tag, digest
// or constraint) names.
func (c *Client) Metadata(ctx context.Context, repoURL, revision string, creds git.Creds) (_ *Metadata, err error) {
	digest, err := c.Resolve(ctx, repoURL, revision, creds, false)
	if err != nil {
		return nil, err
	}
	repo, err := c.repository(repoURL, creds)
	if err != nil {
		return nil, err
	}
	ref, err := name.NewDigest(repo.Name()+"@"+digest, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("revision %q: %w", digest, err)
	}
	defer func(start time.Time) { c.observe(RequestDigestMetadata, repoURL, digest, start, err) }(time.Now())
	opts, err := remoteOptions(ctx, creds)
	if err != nil {
		return nil, err
	}
	m, err := c.manifest(ref, opts)
	if err != nil {
		return nil, err
	}
	a := m.Annotations
	const prefix = "org.opencontainers.image."
	return &Metadata{
		CreatedAt: a[prefix+"created"], Authors: a[prefix+"authors"], DocsURL: a[prefix+"documentation"],
		SourceURL: a[prefix+"source"], Version: a[prefix+"version"], Description: strings.TrimSpace(a[prefix+"description"]),
	}, nil
}
