package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// Azure DevOps pull requests through azure-devops-go-api against a local
// server speaking Azure DevOps' REST API: active requests of the
// repository only, labels select, refs/heads/ trimmed, the author's
// unique name up to "@".
func TestAzureDevOpsPullRequests(t *testing.T) {
	az := scmserver.AzureDevOps(t, "pat", "Contoso", "shop", scmserver.Repo{Name: "web"}, scmserver.Repo{Name: "api"})
	az.AddPullRequest("web", scmserver.PullRequest{Head: "feature/a", Base: "main", Title: "A", HeadSHA: "aaa", Author: "ana@contoso.com", Labels: []string{"preview", "ui"}})
	az.AddPullRequest("api", scmserver.PullRequest{Head: "feature/b", Base: "main", Title: "B", HeadSHA: "bbb", Author: "bo@contoso.com", Labels: []string{"preview"}})
	az.AddPullRequest("web", scmserver.PullRequest{Head: "fix/c", Base: "release", Title: "C", HeadSHA: "ccc", Author: "cy", Labels: []string{"preview"}})
	az.AddPullRequest("web", scmserver.PullRequest{Head: "feature/d", Base: "main", Title: "D", HeadSHA: "ddd", Author: "di@contoso.com"})
	az.AddPullRequest("web", scmserver.PullRequest{Head: "feature/e", Base: "main", Title: "E", HeadSHA: "eee", Labels: []string{"preview"}, Closed: true})
	svc, err := AzureDevOps(az.URL, "Contoso", "shop", "web", "pat", []string{"preview"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prs, err := svc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(prs); got != "[{1 A feature/a main aaa ana [preview ui]} {3 C fix/c release ccc cy [preview]}]" {
		t.Errorf("labelled: %s", got)
	}
	kept, err := Filtered(ctx, svc, []v1alpha1.PullRequestGeneratorFilter{{BranchMatch: str("^feature/"), TargetBranchMatch: str("^main$")}})
	if err != nil || len(kept) != 1 || kept[0].Number != 1 {
		t.Errorf("filtered: %+v %v", kept, err)
	}
	all, _ := AzureDevOps(az.URL, "Contoso", "shop", "web", "pat", nil, nil)
	if prs, err := all.List(ctx); err != nil || len(prs) != 3 || prs[2].Author != "di" || prs[2].Labels != nil {
		t.Errorf("without labels: %+v %v", prs, err)
	}
	for _, where := range [][2]string{{"shop", "none"}, {"nope", "web"}} {
		missing, _ := AzureDevOps(az.URL, "Contoso", where[0], where[1], "pat", nil, nil)
		if _, err := missing.List(ctx); !errors.Is(err, ErrRepositoryNotFound) {
			t.Errorf("missing %s/%s: %v", where[0], where[1], err)
		}
	}
	bad, _ := AzureDevOps(az.URL, "Contoso", "shop", "web", "wrong-pat", nil, nil)
	if _, err := bad.List(ctx); err == nil || errors.Is(err, ErrRepositoryNotFound) || strings.Contains(err.Error(), "wrong-pat") {
		t.Errorf("a wrong token: %v", err)
	}
}

// Requests page by $top and $skip; an endless server ends in an error.
func TestAzureDevOpsPullRequestPaging(t *testing.T) {
	az := scmserver.AzureDevOps(t, "pat", "contoso", "shop", scmserver.Repo{Name: "busy"})
	for i := range 250 {
		az.AddPullRequest("busy", scmserver.PullRequest{Head: fmt.Sprintf("b%d", i), Base: "main", Title: "T", HeadSHA: "s", Author: "a@b"})
	}
	svc, err := AzureDevOps(az.URL, "contoso", "shop", "busy", "pat", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	prs, err := svc.List(context.Background())
	if err != nil || len(prs) != 250 || prs[249].Number != 250 || prs[249].Branch != "b249" {
		t.Fatalf("three pages: %d %v", len(prs), err)
	}
	az.SetEndless(true)
	if _, err := svc.List(context.Background()); err == nil || !strings.Contains(err.Error(), "more than 5000") {
		t.Errorf("an endless server: %v", err)
	}
}
