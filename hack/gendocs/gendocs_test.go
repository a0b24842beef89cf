package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/metrics"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// TestReferencesAreCurrent: the files under docs/reference are what the
// code generates now: a new command, flag, key, operation or metric, or a
// setting that changed what it does, must be regenerated (`make docs`).
func TestReferencesAreCurrent(t *testing.T) {
	refs, err := references(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range refs {
		got, err := os.ReadFile(filepath.Join(repoRoot, referenceDir, name))
		if err != nil {
			t.Errorf("%s: %v (run make docs)", name, err)
			continue
		}
		if string(got) != want {
			t.Errorf("%s is stale: run make docs", name)
		}
	}
	entries, err := os.ReadDir(filepath.Join(repoRoot, referenceDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := refs[e.Name()]; !ok {
			t.Errorf("%s/%s is not generated: remove it", referenceDir, e.Name())
		}
	}
}

// TestReferencesAreComplete: each reference names what it must: every
// command, the flags Argo CD's manifests use, a key of each kind, every
// operation's service, every metric family.
func TestReferencesAreComplete(t *testing.T) {
	refs, err := references(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for name, wants := range map[string][]string{
		"cli.md":                  {"## capstan app create", "## capstan proj role create-token", "## capstan admin settings resource-overrides ignore-differences", "--sync-timeout int"},
		"argocd-cm.md":            {"`timeout.reconciliation`", "`resource.customizations.health.`", "no effect: the bundled Dex is configured by dex.config alone"},
		"argocd-cmd-params-cm.md": {"`controller.sync.timeout.seconds`", "`server.disable.auth`", "`reposerver.git.request.timeout`"},
		"api.md":                  {"## application.ApplicationService", "`GET /api/v1/applications`", "`GET /api/v1/applications/{name}/revisions/{revision}/ocimetadata` | served"},
		"metrics.md":              {"`argocd_app_info`", "`argocd_notifications_deliveries_total`", "`argocd_image_updater_images_updated_total`"},
	} {
		for _, want := range wants {
			if !strings.Contains(refs[name], want) {
				t.Errorf("%s does not name %s", name, want)
			}
		}
	}
	if n := strings.Count(refs["argocd-cmd-params-cm.md"], "\n| `"); n < 150 {
		t.Errorf("argocd-cmd-params-cm.md lists %d keys", n)
	}
}

// link is a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// heading is a Markdown heading line.
var heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)

// TestDocsLinksResolve: every relative link in the README and under
// docs/ names a file that exists, and every #anchor a heading of its file.
func TestDocsLinksResolve(t *testing.T) {
	var pages []string
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(repoRoot, "README.md"))
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := map[string]bool{}
		if data, err := os.ReadFile(file); err == nil {
			for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
				a[anchor(strings.Trim(m[1], "` "))] = true
			}
		}
		anchors[file] = a
		return a
	}
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(path.Clean(file)))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[frag] {
				t.Errorf("%s links to %s, whose heading does not exist", page, target)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("only %d links checked", checked)
	}
}

// argoCDMetric is a metric name in Argo CD's metrics documentation.
var argoCDMetric = regexp.MustCompile("`((?:argocd|grpc)_[a-z_]+)`")

// TestEveryArgoCDMetricDecided: each metric the metrics page of Argo CD's
// newest release (in its module) names is in the reference: served by a
// component, or listed as not served with why, never both.
func TestEveryArgoCDMetricDecided(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	if err != nil {
		t.Fatalf("finding Argo CD's module: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "docs", "operator-manual", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := references(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	served, _, _ := strings.Cut(refs["metrics.md"], "## Argo CD metrics Capstan does not serve")
	names := argoCDMetric.FindAllStringSubmatch(string(page), -1)
	if len(names) < 50 {
		t.Fatalf("Argo CD's metrics page names %d metrics", len(names))
	}
	for _, m := range names {
		isServed := strings.Contains(served, "| `"+m[1]+"` |")
		_, isNot := metrics.NotServed[m[1]]
		switch {
		case isServed && isNot:
			t.Errorf("%s is served and listed as not served", m[1])
		case !isServed && !isNot:
			t.Errorf("%s is neither served nor listed as not served", m[1])
		}
	}
}
