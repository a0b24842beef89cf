package updater

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/pullrequest"
	"github.com/capstan-cd/capstan/internal/imageupdater/writeback"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// writePullRequest pushes the changes to the Application's pull request
// branch (rebuilt from the base, left alone when it already holds them)
// and opens or updates its one request. It reports whether a new commit
// was pushed.
func (u *Updater) writePullRequest(ctx context.Context, st config.Settings, app *v1alpha1.Application, gc writeback.GitCommit, repoURL string) (bool, error) {
	base, head, err := writeback.PullRequestBranches(app, gc.WriteBack)
	if err != nil {
		return false, err
	}
	provider, err := pullrequest.New(*gc.WriteBack.PullRequest, repoURL, pullrequest.Options{Token: gc.Creds.Password, HTTPClient: u.opts.HTTPClient})
	if err != nil {
		return false, err
	}
	message, err := writeback.Message(gc)
	if err != nil {
		return false, err
	}
	gc.Message, gc.KeepCurrentTarget = message, true
	gc.WriteBack.BaseBranch, gc.WriteBack.TargetBranch = base, head
	sha, err := writeback.Commit(ctx, u.opts.Git, gc)
	pushed := err == nil && sha != ""
	switch {
	case errors.Is(err, git.ErrTargetCurrent): // pushed before; the request may still be missing
	case err != nil:
		return false, err
	case sha == "":
		u.opts.Log.Info("Nothing to commit; the base branch already has these images", "application", app.Name, "branch", base)
		return false, nil
	}
	title, body := writeback.PullRequestText(message)
	res, err := provider.Ensure(ctx, pullrequest.Request{Head: head, Base: base, Title: title, Body: body, Labels: gc.WriteBack.PullRequest.Labels})
	if err != nil {
		return false, fmt.Errorf("branch %s was pushed: %w", head, err)
	}
	verb, reason := "Updated", "PullRequestUpdated"
	if res.Created {
		verb, reason = "Opened", "PullRequestOpened"
	}
	u.opts.Log.Info(verb+" pull request", "application", app.Name, "number", res.Number, "url", res.URL, "head", head, "base", base, "pushed", pushed)
	if u.opts.Events != nil && st.KubeEvents && (pushed || res.Created) {
		u.opts.Events.Eventf(app, corev1.EventTypeNormal, reason, "%s pull request #%d (%s) from %s into %s", verb, res.Number, res.URL, head, base)
	}
	if pushed && u.opts.OnCommit != nil {
		u.opts.OnCommit(repoURL)
	}
	return pushed, nil
}
