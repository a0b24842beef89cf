package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func TestHydratorFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		app  v1alpha1.ApplicationSpec
		args []string
		want *v1alpha1.SourceHydrator
		err  string
	}{
		{"create", v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{}},
			[]string{"--dry-source-repo", "https://git.example.com/gitops", "--dry-source-path", "dry", "--sync-source-branch", "environments/dev", "--sync-source-path", "dev"},
			&v1alpha1.SourceHydrator{DrySource: v1alpha1.DrySource{RepoURL: "https://git.example.com/gitops", TargetRevision: "HEAD", Path: "dry"},
				SyncSource: v1alpha1.SyncSource{TargetBranch: "environments/dev", Path: "dev"}}, ""},
		{"set hydrate-to", v1alpha1.ApplicationSpec{SourceHydrator: &v1alpha1.SourceHydrator{DrySource: v1alpha1.DrySource{RepoURL: "r", TargetRevision: "main"}, SyncSource: v1alpha1.SyncSource{TargetBranch: "b", Path: "p"}}},
			[]string{"--hydrate-to-branch", "b-next"},
			&v1alpha1.SourceHydrator{DrySource: v1alpha1.DrySource{RepoURL: "r", TargetRevision: "main"}, SyncSource: v1alpha1.SyncSource{TargetBranch: "b", Path: "p"}, HydrateTo: &v1alpha1.HydrateTo{TargetBranch: "b-next"}}, ""},
		{"beside a source", v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "r"}}, []string{"--dry-source-repo", "r", "--sync-source-branch", "b"}, nil, "has a source"},
		{"no branch", v1alpha1.ApplicationSpec{}, []string{"--dry-source-repo", "r"}, nil, "needs --dry-source-repo and --sync-source-branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &specFlags{}
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			s.add(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			app := &v1alpha1.Application{Spec: tc.app}
			err := s.apply(fs, app)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if app.Spec.Source != nil || !reflect.DeepEqual(app.Spec.SourceHydrator, tc.want) {
				t.Errorf("source %+v, hydrator %+v; want %+v", app.Spec.Source, app.Spec.SourceHydrator, tc.want)
			}
		})
	}
}
