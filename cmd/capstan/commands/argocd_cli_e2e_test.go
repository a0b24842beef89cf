package commands

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestArgoCDCLI drives Capstan with Argo CD's own CLI, over gRPC and
// again over gRPC-Web: it logs in with the initial password, reads the
// server's version and the user's info, and lists Applications.
func TestArgoCDCLI(t *testing.T) {
	for _, flags := range [][]string{nil, {"--grpc-web"}} {
		t.Run(strings.Join(append([]string{"gRPC"}, flags...), " "), func(t *testing.T) {
			f := startCapstan(t, false)
			f.login()
			remote := gitserver.NewLocalRepo(t)
			remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
			f.expect(0, "app", "create", "web", "--repo", remote.URL, "--path", "app",
				"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "default")

			argocd := argocdcli.New(t)
			argocd.Flags = flags
			if code, out, errOut := argocd.Run("login", f.addr, "--username", "admin", "--password", f.password, "--insecure"); code != 0 || !strings.Contains(out, "logged in successfully") {
				t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
			}
			var version map[string]map[string]any
			if err := json.Unmarshal([]byte(argocd.Expect(0, "version", "-o", "json")), &version); err != nil || version["server"]["Version"] == nil {
				t.Errorf("version: %v %v", err, version)
			}
			var user map[string]any
			if err := json.Unmarshal([]byte(argocd.Expect(0, "account", "get-user-info", "-o", "json")), &user); err != nil || user["loggedIn"] != true || user["username"] != "admin" {
				t.Errorf("get-user-info: %v %v", err, user)
			}
			var apps []struct {
				Metadata struct{ Name string }
				Spec     struct{ Source struct{ RepoURL string } }
			}
			if err := json.Unmarshal([]byte(argocd.Expect(0, "app", "list", "-o", "json")), &apps); err != nil || len(apps) != 1 ||
				apps[0].Metadata.Name != "web" || apps[0].Spec.Source.RepoURL != remote.URL {
				t.Errorf("app list: %v %+v", err, apps)
			}
		})
	}
}
