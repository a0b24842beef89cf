package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// newestArgoCDModule is the Argo CD module Capstan's go.mod requires: the
// newest release the module proxy serves for Capstan's Go. Its CLI cannot
// be built from the proxy (it needs a gitops-engine pseudo-version the
// proxy refuses), so its command tree is read from the CLI reference the
// module ships (docs/user-guide/commands), which cobra generates.
const newestArgoCDModule = "github.com/argoproj/argo-cd/v3"

// Lines of the generated CLI reference.
var (
	docCommand = regexp.MustCompile(`(?m)^## (argocd(?: [\w-]+)*)\s*$`)
	docFlag    = regexp.MustCompile(`^\s+(?:-(\w), )?--([\w-]+)`)
)

// argoCDDocLines lists the newest Argo CD CLI's commands and flags, by
// name: "path", "path --flag", "path -s".
func argoCDDocLines(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", newestArgoCDModule).Output()
	if err != nil {
		t.Fatalf("finding %s: %v", newestArgoCDModule, err)
	}
	docs, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "docs", "user-guide", "commands", "argocd*.md"))
	if err != nil || len(docs) < 100 {
		t.Fatalf("Argo CD's CLI reference: %d pages, %v", len(docs), err)
	}
	var lines []string
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		m := docCommand.FindStringSubmatch(string(data))
		if m == nil {
			t.Fatalf("%s names no command", doc)
		}
		path := m[1]
		lines = append(lines, path)
		inOptions := false
		for _, l := range strings.Split(string(data), "\n") {
			switch {
			case strings.HasPrefix(l, "### Options"):
				inOptions = true
			case strings.HasPrefix(l, "### "):
				inOptions = false
			case inOptions:
				if f := docFlag.FindStringSubmatch(l); f != nil && f[2] != "help" {
					lines = append(lines, path+" --"+f[2])
					if f[1] != "" {
						lines = append(lines, path+" -"+f[1])
					}
				}
			}
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// TestNewestArgoCDCommandTree: every command and flag of the newest Argo
// CD release's CLI, as its reference lists them, exists in Capstan's run
// as argocd, except those in testdata/argocd-newest-cli-missing.txt,
// which only shrinks (-update-cli-gaps rewrites it).
func TestNewestArgoCDCommandTree(t *testing.T) {
	root, _ := newRootAs(ArgoCDName)
	root.InitDefaultCompletionCmd()
	have := map[string]bool{}
	for _, l := range cliLines(root) {
		if path, _, found := strings.Cut(l, " --"); found {
			name, _, _ := strings.Cut(l[len(path)+3:], " ")
			l = path + " --" + name // without the type, which the reference shows differently
		}
		have[l] = true
	}
	const gaps = "testdata/argocd-newest-cli-missing.txt"
	var missing []string
	argo := argoCDDocLines(t)
	for _, l := range argo {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	if *updateCLIGaps {
		text := "# The newest Argo CD CLI's commands and flags Capstan's CLI lacks yet; TestNewestArgoCDCommandTree keeps this list exact.\n" + strings.Join(missing, "\n") + "\n"
		if err := os.WriteFile(gaps, []byte(text), 0o644); err != nil { //nolint:gosec // test data
			t.Fatal(err)
		}
	}
	known := readLines(t, gaps)
	for _, l := range missing {
		if !slices.Contains(known, l) {
			t.Errorf("Capstan's CLI lacks Argo CD's %q", l)
		}
	}
	for _, l := range known {
		if !slices.Contains(missing, l) {
			t.Errorf("%q is no longer missing: take it off %s", l, gaps)
		}
	}
	t.Logf("the newest Argo CD CLI: %d lines; Capstan lacks %d", len(argo), len(missing))
}
