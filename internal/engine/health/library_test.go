package health

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	argocdcustomizations "github.com/argoproj/argo-cd/v3/resource_customizations"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// libraryCases are the test cases Argo CD publishes beside its health
// scripts: <group>/<Kind>/health_test.yaml.
type libraryCases struct {
	Tests []struct {
		HealthStatus Status `json:"healthStatus"`
		InputPath    string `json:"inputPath"`
	} `json:"tests"`
}

// TestArgoCDHealthCases runs every health case of Argo CD's module
// through the Checker, as the controller checks a live object: at least
// 99 % give the status Argo CD expects, and none that Argo CD calls
// Degraded is shown Healthy.
func TestArgoCDHealthCases(t *testing.T) {
	checker, err := NewChecker(nil)
	if err != nil {
		t.Fatal(err)
	}
	for gk := range builtin {
		if _, ok := builtinLibrary().lookup(gk); ok {
			t.Errorf("%s has a script in Argo CD's library and a Go rule, which the Checker runs instead", gk)
		}
	}
	files, err := fs.Glob(argocdcustomizations.Embedded, "*/*/health_test.yaml")
	if err != nil || len(files) < 200 {
		t.Fatalf("the module's health cases: %d files, %v", len(files), err)
	}
	var total, equal, sameMessage int
	var differ []string
	for _, file := range files {
		var cases libraryCases
		if err := yaml.Unmarshal(read(t, file), &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, tc := range cases.Tests {
			input := path.Join(path.Dir(file), tc.InputPath)
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(read(t, input), &obj.Object); err != nil {
				t.Fatalf("%s: %v", input, err)
			}
			total++
			got, _ := checker.Check(obj)
			want := tc.HealthStatus
			if got.Status == want.Status {
				equal++
				if got.Message == want.Message {
					sameMessage++
				}
				continue
			}
			differ = append(differ, fmt.Sprintf("%s: %s %q, want %s %q", input, got.Status, got.Message, want.Status, want.Message))
			if want.Status == v1alpha1.HealthStatusDegraded && got.Status == v1alpha1.HealthStatusHealthy {
				t.Errorf("%s: Degraded shown Healthy (%q)", input, got.Message)
			}
		}
	}
	t.Logf("Argo CD's health cases: %d of %d give its status (%.1f %%), %d its message too", equal, total, 100*float64(equal)/float64(total), sameMessage)
	if total < 1000 || float64(equal) < 0.99*float64(total) {
		t.Errorf("%d of %d cases give Argo CD's status, want at least 99 %%:\n%s", equal, total, strings.Join(differ, "\n"))
	} else if len(differ) > 0 {
		t.Logf("differing:\n%s", strings.Join(differ, "\n"))
	}
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	data, err := fs.ReadFile(argocdcustomizations.Embedded, name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// gitopsEngine is the gitops-engine whose core-kind health cases the
// Checker is held to: the one Argo CD's v3.2 and v3.3 releases build with.
const gitopsEngine = "github.com/argoproj/gitops-engine@v0.7.1-0.20251217140045-5baed5604d2d"

// TestGitopsEngineCoreCases runs the core kinds' health cases of Argo
// CD's gitops-engine (its pkg/health tests name each file and the status
// it expects): every one gives that status.
func TestGitopsEngineCoreCases(t *testing.T) {
	if testing.Short() {
		t.Skip("reads gitops-engine's module through the go command")
	}
	out, err := exec.Command("go", "mod", "download", "-json", gitopsEngine).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", gitopsEngine, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", gitopsEngine, err, out)
	}
	dir := filepath.Join(mod.Dir, "pkg", "health")
	src, err := os.ReadFile(filepath.Join(dir, "health_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	checker, _ := NewChecker(nil)
	cases := regexp.MustCompile(`assertAppHealth\(t, "([^"]+)", HealthStatus(\w+)\)`).FindAllStringSubmatch(string(src), -1)
	if len(cases) < 40 {
		t.Fatalf("%d cases found in gitops-engine's health tests", len(cases))
	}
	for _, c := range cases {
		obj := &unstructured.Unstructured{}
		data, err := os.ReadFile(filepath.Join(dir, c[1]))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			t.Fatalf("%s: %v", c[1], err)
		}
		if got, _ := checker.Check(obj); string(got.Status) != c[2] {
			t.Errorf("%s: %s %q, want %s", c[1], got.Status, got.Message, c[2])
		}
	}
	t.Logf("%d core-kind cases", len(cases))
}

// BenchmarkLibraryHealth is one check by a script of Argo CD's library
// (an Argo Rollouts Rollout), compiled once: what each reconcile pays per
// such resource.
func BenchmarkLibraryHealth(b *testing.B) {
	data, err := fs.ReadFile(argocdcustomizations.Embedded, "argoproj.io/Rollout/testdata/healthy_newWorkloadGeneration.yaml")
	if err != nil {
		b.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		b.Fatal(err)
	}
	checker, _ := NewChecker(nil)
	b.ReportAllocs()
	for b.Loop() {
		if st, err := checker.Check(obj); err != nil || st.Status != v1alpha1.HealthStatusHealthy {
			b.Fatal(st, err)
		}
	}
}
