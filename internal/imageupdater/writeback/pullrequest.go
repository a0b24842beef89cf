package writeback

import (
	"errors"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
)

// PullRequestBranches are the branches of a pull request write-back: the
// base the request goes into (the branch configured, else the source's
// targetRevision) and the head holding the change, one per Application,
// rebuilt from the base by each new version.
func PullRequestBranches(app *v1alpha1.Application, wb config.WriteBack) (base, head string, err error) {
	base = wb.BaseBranch
	if base == "" {
		base = baseRevision(app, wb)
	}
	if base == "" || base == "HEAD" {
		return "", "", errors.New("a pull request needs a base branch: set the write-back's branch or the source's targetRevision to a branch")
	}
	return base, "image-updater/" + app.Namespace + "/" + app.Name, nil
}

// PullRequestText splits a rendered commit message into a request's title
// (its first line) and description (the rest).
func PullRequestText(message string) (title, body string) {
	title, body, _ = strings.Cut(strings.TrimSpace(message), "\n")
	return strings.TrimSpace(title), strings.TrimSpace(body)
}
