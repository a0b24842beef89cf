package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestApplicationsAreValidatedAtTheDoor creates and updates Applications
// that Argo CD's API refuses, and checks each is refused with its message
// (and the command-injection payloads of a repository URL or revision
// with a clear error, having run nothing).
func TestApplicationsAreValidatedAtTheDoor(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	token := f.adminToken()
	marker := filepath.Join(t.TempDir(), "pwned")
	narrow := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "narrow", Namespace: f.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"https://git.example.com/allowed.git"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "allowed"}},
	}}
	if err := f.c.Create(t.Context(), narrow); err != nil {
		t.Fatal(err)
	}
	ok := v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/app.git", Path: "app", TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "apps"},
	}
	for _, tc := range []struct {
		name   string
		change func(*v1alpha1.ApplicationSpec)
		want   string
	}{
		{"no-destination", func(s *v1alpha1.ApplicationSpec) { s.Destination = v1alpha1.ApplicationDestination{} }, "Destination server missing from app spec"},
		{"both", func(s *v1alpha1.ApplicationSpec) { s.Destination.Name = "in-cluster" }, "can't have both name and server defined"},
		{"unknown-cluster", func(s *v1alpha1.ApplicationSpec) { s.Destination.Server = "https://nowhere:6443" }, "cluster 'https://nowhere:6443' has not been configured"},
		{"unknown-name", func(s *v1alpha1.ApplicationSpec) { s.Destination = v1alpha1.ApplicationDestination{Name: "nowhere"} }, "destination cluster nowhere which does not exist"},
		{"no-source", func(s *v1alpha1.ApplicationSpec) { s.Source = nil }, "repoURL and either spec.source.path or spec.source.chart are required"},
		{"chart-no-version", func(s *v1alpha1.ApplicationSpec) {
			s.Source = &v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "nginx"}
		}, "targetRevision is required if the manifest source is a helm chart"},
		{"repo-not-permitted", func(s *v1alpha1.ApplicationSpec) { s.Project = "narrow"; s.Destination.Namespace = "allowed" }, "application repo https://git.example.com/app.git is not permitted in project 'narrow'"},
		{"destination-not-permitted", func(s *v1alpha1.ApplicationSpec) {
			s.Project, s.Source.RepoURL = "narrow", "https://git.example.com/allowed.git"
		}, "do not match any of the allowed destinations in project 'narrow'"},
		{"path-outside", func(s *v1alpha1.ApplicationSpec) { s.Source.Path = "../../etc" }, `spec.source.path "../../etc" is outside the repository`},
		{"path-absolute", func(s *v1alpha1.ApplicationSpec) { s.Source.Path = "/etc" }, "is outside the repository"},
		{"upload-pack", func(s *v1alpha1.ApplicationSpec) {
			s.Source.RepoURL, s.Source.TargetRevision = "--upload-pack=touch "+marker, strings.Repeat("a", 40)
		}, "invalid repository URL"},
		{"ssh-command", func(s *v1alpha1.ApplicationSpec) { s.Source.RepoURL = "-c core.sshCommand=touch " + marker }, "invalid repository URL"},
		{"ext", func(s *v1alpha1.ApplicationSpec) { s.Source.RepoURL = "ext::sh -c touch% " + marker }, "invalid repository URL"},
		{"revision-option", func(s *v1alpha1.ApplicationSpec) { s.Source.TargetRevision = "--output=" + marker }, "invalid revision"},
		{"chart-traversal", func(s *v1alpha1.ApplicationSpec) {
			s.Source = &v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "../../x", TargetRevision: "1.0.0"}
		}, "chart name"},
	} {
		spec := *ok.DeepCopy()
		tc.change(&spec)
		body, _ := json.Marshal(v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: tc.name}, Spec: spec})
		var answer map[string]any
		code := f.call("POST", "/api/v1/applications", string(body), token, &answer)
		msg, _ := answer["message"].(string)
		if code != 400 || answer["code"] != float64(3) || !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "application spec for "+tc.name+" is invalid: InvalidSpecError: ") {
			t.Errorf("%s: %d %v, want 400 InvalidArgument with %q", tc.name, code, answer, tc.want)
		}
	}

	// The same checks on update.
	body, _ := json.Marshal(v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "good"}, Spec: ok})
	if code := f.call("POST", "/api/v1/applications", string(body), token, nil); code != 200 {
		t.Fatalf("a valid Application: %d", code)
	}
	bad := ok.DeepCopy()
	bad.Source.RepoURL = "--upload-pack=touch " + marker
	specBody, _ := json.Marshal(bad)
	var answer map[string]any
	if code := f.call("PUT", "/api/v1/applications/good/spec", string(specBody), token, &answer); code != 400 || !strings.Contains(answer["message"].(string), "invalid repository URL") {
		t.Errorf("update to an injecting URL: %d %v", code, answer)
	}

	// Names that no object can have, however encoded, are 400, not 500.
	for _, path := range []string{"/api/v1/applications/..%2F..%2Fetc", "/api/v1/applications/a%2Fb", "/api/v1/applications/UPPER", "/api/v1/projects/..%2Fx"} {
		if code := f.call("GET", path, "", token, nil); code != 400 {
			t.Errorf("GET %s: %d, want 400", path, code)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("a payload ran: %s exists", marker)
	}
}
