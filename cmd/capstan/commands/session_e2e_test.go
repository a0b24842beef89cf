package commands

import (
	"os"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSessionAndAccountCommands covers Argo CD's relogin, configure,
// version (with the server's), account get and bcrypt, repo get and the
// selector form of app delete.
func TestSessionAndAccountCommands(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	f.login()
	if out := f.expect(0, "relogin", "--password", f.password); !strings.Contains(out, "updated") {
		t.Errorf("relogin:\n%s", out)
	}
	f.expect(1, "relogin", "--password", "wrong-password")
	if out := f.expect(0, "version"); !strings.Contains(out, "capstan-server: ") {
		t.Errorf("version names no server:\n%s", out)
	}
	if out := f.expect(0, "account", "get"); !strings.Contains(out, "NAME:          admin") || !strings.Contains(out, "login") {
		t.Errorf("account get:\n%s", out)
	}
	if out := f.expect(0, "account", "bcrypt", "--password", "a-long-password"); !strings.HasPrefix(out, "$2a$") {
		t.Errorf("account bcrypt: %q", out)
	}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
	f.expect(0, "repo", "add", remote.URL)
	if out := f.expect(0, "repo", "get", remote.URL, "-o", "url"); strings.TrimSpace(out) != remote.URL {
		t.Errorf("repo get -o url: %q", out)
	}
	for _, name := range []string{"one", "two"} {
		f.expect(0, "app", "create", name, "--repo", remote.URL, "--path", "app", "--label", "team=web",
			"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "default")
	}
	f.expect(0, "app", "add-source", "one", "--repo", remote.URL, "--path", "app", "--ref", "values", "--validate=false")
	var one v1alpha1.Application
	if err := f.get("/api/v1/applications/one", &one); err != nil || one.Spec.Source != nil || len(one.Spec.Sources) != 2 || one.Spec.Sources[1].Ref != "values" {
		t.Errorf("after add-source: %v %+v", err, one.Spec)
	}
	f.expect(0, "app", "set", "one", "--source-position", "1", "--revision", "main")
	f.expect(0, "app", "remove-source", "one", "--source-position", "2")
	if err := f.get("/api/v1/applications/one", &one); err != nil || len(one.Spec.Sources) != 1 || one.Spec.Sources[0].TargetRevision != "main" {
		t.Errorf("after set and remove-source: %v %+v", err, one.Spec)
	}
	f.expect(0, "configure", "--prompts-enabled")
	if data, err := os.ReadFile(f.config); err != nil || !strings.Contains(string(data), "prompts-enabled: true") {
		t.Errorf("the configuration after configure: %v\n%s", err, data)
	}
	if out := f.expect(0, "app", "delete", "-l", "team=web", "--yes", "--wait", "--cascade=false"); strings.Count(out, "deleted") != 2 {
		t.Errorf("app delete -l:\n%s", out)
	}
	if out := f.expect(0, "app", "list", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("apps left: %q", out)
	}
}
