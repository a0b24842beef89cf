// Package giteaserver runs a real Gitea for tests: built by `make gitea`
// from tools/gitea (with Gitea's options and templates beside it), on a
// free loopback port with a SQLite database in a temporary directory and
// an administrator whose API token the tests use. Helpers create
// organizations, repositories with files, branches, labels and pull
// requests through Gitea's own API client.
package giteaserver

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

const (
	adminUser     = "capstan"
	adminPassword = "test-Pa55word-for-gitea"
)

// Server is a running Gitea.
type Server struct {
	// URL is its address ("http://127.0.0.1:<port>").
	URL string
	// Token is the administrator's API token.
	Token string
	// Client is Gitea's API client, authenticated as the administrator.
	Client *gitea.Client
}

// Start runs Gitea until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := toolbin.Find(t, "CAPSTAN_GITEA_BIN", "bin/gitea/gitea", "gitea")
	work := t.TempDir()
	for _, d := range []string{"options", "templates"} {
		if err := os.Symlink(filepath.Join(filepath.Dir(bin), d), filepath.Join(work, d)); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	conf := writeConfig(t, work, port)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--work-path", work, "--config", conf}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+work)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gitea %s: %v\n%s", args[0], err, out)
		}
	}
	run("migrate")
	run("admin", "user", "create", "--admin", "--username", adminUser, "--password", adminPassword,
		"--email", adminUser+"@example.com", "--must-change-password=false")
	web := exec.Command(bin, "--work-path", work, "--config", conf, "web")
	web.Env = append(os.Environ(), "HOME="+work)
	web.Stdout, web.Stderr = os.Stderr, os.Stderr
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = web.Process.Kill()
		_ = web.Wait()
	})
	waitReady(t, url)
	basic, err := gitea.NewClient(url, gitea.SetBasicAuth(adminUser, adminPassword))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := basic.CreateAccessToken(gitea.CreateAccessTokenOption{Name: "tests", Scopes: []gitea.AccessTokenScope{gitea.AccessTokenScopeAll}})
	if err != nil {
		t.Fatalf("creating a Gitea token: %v", err)
	}
	c, err := gitea.NewClient(url, gitea.SetToken(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	return &Server{URL: url, Token: tok.Token, Client: c}
}

// writeConfig writes app.ini: SQLite, no SSH, no mailer, no cron,
// webhooks to loopback addresses allowed (the tests' servers), and root
// allowed (containers here run as root).
func writeConfig(t testing.TB, work string, port int) string {
	t.Helper()
	conf := filepath.Join(work, "custom", "conf", "app.ini")
	ini := fmt.Sprintf(`APP_NAME = capstan-test
RUN_MODE = prod
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true
WORK_PATH = %[1]s
[database]
DB_TYPE = sqlite3
PATH = %[1]s/gitea.db
[server]
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]d
ROOT_URL = http://127.0.0.1:%[2]d/
DISABLE_SSH = true
OFFLINE_MODE = true
LFS_START_SERVER = true
LFS_JWT_SECRET = Y2Fwc3Rhbi10ZXN0LWxmcy1qd3Qtc2VjcmV0LWtleTA
[lfs]
PATH = %[1]s/lfs
[security]
INSTALL_LOCK = true
SECRET_KEY = capstan-test-secret-key
[repository]
ROOT = %[1]s/repositories
DEFAULT_BRANCH = main
[log]
MODE = console
LEVEL = error
[service]
DISABLE_REGISTRATION = true
[cron]
ENABLED = false
[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false
[webhook]
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 10
`, work, port)
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf
}

func waitReady(t testing.TB, url string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 60*time.Second; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url + "/api/v1/version"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("gitea did not answer on %s", url)
}

// CloneURL is the Git URL of org/name with the administrator's
// credentials in it, for tests that push with git (Git LFS files, say).
func (s *Server) CloneURL(org, name string) string {
	return strings.Replace(s.URL, "http://", "http://"+adminUser+":"+adminPassword+"@", 1) + "/" + org + "/" + name + ".git"
}

// Username and Password are the administrator's, for clients that
// authenticate with basic auth.
const (
	Username = adminUser
	Password = adminPassword
)

// Org creates an organization.
func (s *Server) Org(t testing.TB, name string) {
	t.Helper()
	if _, _, err := s.Client.CreateOrg(gitea.CreateOrgOption{Name: name, Visibility: gitea.VisibleTypePublic}); err != nil {
		t.Fatalf("creating Gitea organization %s: %v", name, err)
	}
}

// Repo creates org/name with a main branch holding a README.md and files
// (path: content).
func (s *Server) Repo(t testing.TB, org, name string, files map[string]string) *gitea.Repository {
	t.Helper()
	r, _, err := s.Client.CreateOrgRepo(org, gitea.CreateRepoOption{Name: name, AutoInit: true, DefaultBranch: "main"})
	if err != nil {
		t.Fatalf("creating Gitea repository %s/%s: %v", org, name, err)
	}
	for path, content := range files {
		s.File(t, org, name, "main", "", path, content)
	}
	return r
}

// File commits path with content on branch; with from set, branch is
// created from it first.
func (s *Server) File(t testing.TB, org, repo, branch, from, path, content string) {
	t.Helper()
	opts := gitea.FileOptions{BranchName: branch, Message: "add " + path}
	if from != "" {
		opts.BranchName, opts.NewBranchName = from, branch
	}
	if _, _, err := s.Client.CreateFile(org, repo, path, gitea.CreateFileOptions{FileOptions: opts,
		Content: base64.StdEncoding.EncodeToString([]byte(content))}); err != nil {
		t.Fatalf("committing %s to %s/%s@%s: %v", path, org, repo, branch, err)
	}
}

// Label creates a repository label and returns its ID.
func (s *Server) Label(t testing.TB, org, repo, name string) int64 {
	t.Helper()
	l, _, err := s.Client.CreateLabel(org, repo, gitea.CreateLabelOption{Name: name, Color: "#00aabb"})
	if err != nil {
		t.Fatalf("creating label %s in %s/%s: %v", name, org, repo, err)
	}
	return l.ID
}

// PullRequest opens a request from head into base and returns its number.
func (s *Server) PullRequest(t testing.TB, org, repo, head, base, title string, labels ...int64) int64 {
	t.Helper()
	pr, _, err := s.Client.CreatePullRequest(org, repo, gitea.CreatePullRequestOption{Head: head, Base: base, Title: title, Labels: labels})
	if err != nil {
		t.Fatalf("opening a pull request %s→%s in %s/%s: %v", head, base, org, repo, err)
	}
	return pr.Index
}

// AddLabels labels an issue or pull request.
func (s *Server) AddLabels(t testing.TB, org, repo string, number int64, labels ...int64) {
	t.Helper()
	if _, _, err := s.Client.AddIssueLabels(org, repo, number, gitea.IssueLabelsOption{Labels: labels}); err != nil {
		t.Fatalf("labelling #%d of %s/%s: %v", number, org, repo, err)
	}
}

// Webhook makes the repository send its push and pull request events to
// url as Gitea's own JSON payloads, signed with secret.
func (s *Server) Webhook(t testing.TB, org, repo, url, secret string) {
	t.Helper()
	if _, _, err := s.Client.CreateRepoHook(org, repo, gitea.CreateHookOption{Type: gitea.HookTypeGitea, Active: true,
		Events: []string{"push", "pull_request"}, Config: map[string]string{"url": url, "content_type": "json", "secret": secret}}); err != nil {
		t.Fatalf("adding a webhook to %s/%s: %v", org, repo, err)
	}
}

// Close closes a pull request.
func (s *Server) Close(t testing.TB, org, repo string, number int64) {
	t.Helper()
	closed := gitea.StateClosed
	if _, _, err := s.Client.EditPullRequest(org, repo, number, gitea.EditPullRequestOption{State: &closed}); err != nil {
		t.Fatalf("closing #%d of %s/%s: %v", number, org, repo, err)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
