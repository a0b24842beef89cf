package writeback

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// Committer commits a change to a repository and pushes it, returning
// the commit's SHA ("" when the change changed nothing). *git.Writer is one.
type Committer interface {
	Commit(ctx context.Context, url string, creds git.Creds, c git.Change) (string, error)
}

// GitCommit is one Git write-back of an Application's changes.
type GitCommit struct {
	App       *v1alpha1.Application
	WriteBack config.WriteBack
	Changes   []Change
	// Creds reach the repository (see Repository).
	Creds git.Creds
	// AuthorName and AuthorEmail sign the commit.
	AuthorName, AuthorEmail string
	// MessageTemplate is the updater's commit message template, used
	// when the Application names none. Default DefaultCommitMessage.
	MessageTemplate string
	// Signing, if set, signs the commit; SignOff adds the author's
	// Signed-off-by trailer.
	Signing *git.Signing
	SignOff bool
	// KeepCurrentTarget leaves a target branch that already holds the
	// change alone (git.ErrTargetCurrent): a pull request's branch.
	KeepCurrentTarget bool
	// Message, if set, is the rendered commit message (see Message).
	Message string
}

// Message renders the commit message of gc: the Application's template,
// else the updater's, else DefaultCommitMessage.
func Message(gc GitCommit) (string, error) {
	if gc.Message != "" {
		return gc.Message, nil
	}
	message, err := Render(cmp.Or(gc.WriteBack.CommitMessage, gc.MessageTemplate, DefaultCommitMessage), gc.App.Name, gc.Changes)
	if err != nil {
		return "", fmt.Errorf("commit message: %w", err)
	}
	return message, nil
}

// baseRevision is the revision a Git write-back starts from: that of the
// source of git-repository's repository, else the main source's.
func baseRevision(app *v1alpha1.Application, wb config.WriteBack) string {
	for _, s := range app.Spec.Sources {
		if wb.Repository != "" && s.RepoURL == wb.Repository {
			return s.TargetRevision
		}
	}
	if src, _ := MainSource(app, wb); src != nil {
		return src.TargetRevision
	}
	return ""
}

// Repository is where a Git write-back of app pushes: git-repository, else
// the repository of the Application's main source (see MainSource).
func Repository(app *v1alpha1.Application, wb config.WriteBack) (string, error) {
	src, _ := MainSource(app, wb)
	if src == nil {
		return "", errors.New("git write-back needs an Application with a source")
	}
	return cmp.Or(wb.Repository, src.RepoURL), nil
}

// Commit writes the changes to Git: to the base branch (git-branch, else
// the source's targetRevision, else the default branch), or to a target
// branch made from it when git-branch names one. It returns the commit's
// SHA, "" when Git already had the changes.
func Commit(ctx context.Context, c Committer, gc GitCommit) (string, error) {
	repoURL, err := Repository(gc.App, gc.WriteBack)
	if err != nil {
		return "", err
	}
	wb := gc.WriteBack
	base := wb.BaseBranch
	if base == "" {
		if base = baseRevision(gc.App, wb); base == "HEAD" {
			base = ""
		}
	}
	target := ""
	if wb.TargetBranch != "" {
		if target, err = Branch(wb.TargetBranch, gc.App.Name, gc.Changes); err != nil {
			return "", fmt.Errorf("annotation %sgit-branch: %w", config.Prefix, err)
		}
	}
	message, err := Message(gc)
	if err != nil {
		return "", err
	}
	return c.Commit(ctx, repoURL, gc.Creds, git.Change{
		Base: base, Target: target, AuthorName: gc.AuthorName, AuthorEmail: gc.AuthorEmail, Message: message,
		Signing: gc.Signing, SignOff: gc.SignOff, Edit: GitEdit(gc.App, wb, gc.Changes), KeepCurrentTarget: gc.KeepCurrentTarget,
	})
}
