package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// TestImageUpdaterTest runs image-updater test against a real registry
// with htpasswd auth, as Image Updater's documented production and development setups
// would pick.
func TestImageUpdaterTest(t *testing.T) {
	reg := registryserver.Start(t)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	reg.PushImage(t, "team/app", day, "1.0.0")
	reg.PushImage(t, "team/app", day.Add(time.Hour), "1.1.0")
	reg.PushImage(t, "team/app", day.Add(2*time.Hour), "1.2.0-rc1")
	reg.PushImage(t, "team/app", day.Add(3*time.Hour), "3f2a9c1", "latest")
	conf := filepath.Join(t.TempDir(), "registries.conf")
	if err := os.WriteFile(conf, []byte("registries:\n- name: local\n  prefix: "+reg.Host+"\n  api_url: http://"+reg.Host+
		"\n  insecure: yes\n  credentials: env:LOCAL_REGISTRY_CREDS\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LOCAL_REGISTRY_CREDS", reg.Username+":"+reg.Password)
	image := reg.Host + "/team/app"
	run := func(args ...string) (int, string, string) {
		var out, errOut strings.Builder
		code := Execute(append([]string{"image-updater", "test", image, "--registries-conf-path", conf}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run("--ignore-tags", "latest"); code != 0 || !strings.Contains(out, "would update to "+image+":1.1.0") ||
		!strings.Contains(out, "considered, best last: 1.0.0 1.1.0") {
		t.Errorf("semver (production): %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run("--update-strategy", "latest", "--allow-tags", "regexp:^[0-9a-f]{5,40}$", "--ignore-tags", "latest"); code != 0 ||
		!strings.Contains(out, "would update to "+image+":3f2a9c1") || !strings.Contains(errOut, "deprecated") {
		t.Errorf("newest build (development): %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := run("--semver-constraint", "1.x-0"); code != 0 || !strings.Contains(out, ":1.2.0-rc1") {
		t.Errorf("a pre-release allowed by the constraint: %d\n%s", code, out)
	}
	if code, _, errOut := run("--semver-constraint", "9.x"); code != 1 || !strings.Contains(errOut, "no tag to update to") {
		t.Errorf("nothing meets the constraint: %d %s", code, errOut)
	}
	t.Setenv("LOCAL_REGISTRY_CREDS", reg.Username+":wrong")
	if code, _, errOut := run(); code != 1 || !strings.Contains(errOut, "refused the credentials") {
		t.Errorf("wrong credentials: %d %s", code, errOut)
	}
}
