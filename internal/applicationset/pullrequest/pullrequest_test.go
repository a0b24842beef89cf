package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

func str(s string) *string { return &s }

// GitLab's merge requests through its client-go against a local server
// speaking GitLab's API: labels and state select, filters keep those any
// filter matches.
func TestGitLabFiltered(t *testing.T) {
	gl := scmserver.GitLab(t, "gl-token", "group/shop")
	gl.Add(scmserver.PullRequest{Head: "feature/a", Base: "main", Title: "A", HeadSHA: "aaa", Author: "ana", Labels: []string{"preview"}})
	gl.Add(scmserver.PullRequest{Head: "feature/b", Base: "release", Title: "WIP: B", HeadSHA: "bbb", Author: "bo", Labels: []string{"preview"}})
	gl.Add(scmserver.PullRequest{Head: "fix/c", Base: "main", Title: "C", HeadSHA: "ccc", Author: "cy", Labels: []string{"preview"}})
	gl.Add(scmserver.PullRequest{Head: "feature/d", Base: "main", Title: "D", HeadSHA: "ddd"})
	gl.Close(3)
	svc, err := GitLab(gl.URL, "group/shop", "gl-token", []string{"preview"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	filters := []v1alpha1.PullRequestGeneratorFilter{
		{BranchMatch: str("^feature/"), TargetBranchMatch: str("^main$")},
		{TitleMatch: str("^WIP")},
	}
	prs, err := Filtered(context.Background(), svc, filters)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(prs); got != "[{1 A feature/a main aaa ana [preview]} {2 WIP: B feature/b release bbb bo [preview]}]" {
		t.Errorf("kept %s", got)
	}
	if _, err := Filtered(context.Background(), svc, []v1alpha1.PullRequestGeneratorFilter{{TitleMatch: str("(")}}); err == nil {
		t.Error("a bad filter was taken")
	}
	missing, _ := GitLab(gl.URL, "group/none", "gl-token", nil, "", nil)
	if _, err := missing.List(context.Background()); !errors.Is(err, ErrRepositoryNotFound) {
		t.Errorf("a missing project: %v", err)
	}
	bad, _ := GitLab(gl.URL, "group/shop", "wrong", nil, "", nil)
	if _, err := bad.List(context.Background()); err == nil || errors.Is(err, ErrRepositoryNotFound) {
		t.Errorf("a bad token: %v", err)
	}
}

func TestGitHubNotFound(t *testing.T) {
	gh := scmserver.GitHub(t, "t", "org", "shop")
	svc, err := GitHub(gh.URL, "org", "other", "t", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.List(context.Background()); !errors.Is(err, ErrRepositoryNotFound) {
		t.Errorf("a missing repository: %v", err)
	}
}
