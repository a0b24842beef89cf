package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// hydratorSpecFlags set an Application's source hydrator, as Argo CD's
// app create and app set do.
type hydratorSpecFlags struct {
	dryRepo, dryRevision, dryPath string
	syncBranch, syncPath          string
	hydrateToBranch               string
}

func (h *hydratorSpecFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&h.dryRepo, "dry-source-repo", "", "source hydrator: repository URL of the dry source")
	fs.StringVar(&h.dryRevision, "dry-source-revision", "", "source hydrator: revision of the dry source (default HEAD)")
	fs.StringVar(&h.dryPath, "dry-source-path", "", "source hydrator: directory of the dry source")
	fs.StringVar(&h.syncBranch, "sync-source-branch", "", "source hydrator: branch the hydrated manifests are synced from")
	fs.StringVar(&h.syncPath, "sync-source-path", "", "source hydrator: directory of the hydrated manifests (not the repository's root)")
	fs.StringVar(&h.hydrateToBranch, "hydrate-to-branch", "", "source hydrator: branch to push the hydrated manifests to instead of --sync-source-branch")
}

// apply sets the source hydrator from the flags given; an Application
// that gets one loses its (empty) source.
func (h *hydratorSpecFlags) apply(fs *pflag.FlagSet, app *v1alpha1.Application) error {
	flags := []string{"dry-source-repo", "dry-source-revision", "dry-source-path", "sync-source-branch", "sync-source-path", "hydrate-to-branch"}
	given := false
	for _, f := range flags {
		given = given || fs.Changed(f)
	}
	if !given {
		return nil
	}
	spec := &app.Spec
	if (spec.Source != nil && spec.Source.RepoURL != "") || len(spec.Sources) > 0 {
		return fmt.Errorf("application %s has a source; a source hydrator replaces it: remove the source first", app.Name)
	}
	spec.Source = nil
	hyd := spec.SourceHydrator
	if hyd == nil {
		hyd = &v1alpha1.SourceHydrator{DrySource: v1alpha1.DrySource{TargetRevision: "HEAD"}}
	}
	set := func(flag string, dst *string, v string) {
		if fs.Changed(flag) {
			*dst = v
		}
	}
	set("dry-source-repo", &hyd.DrySource.RepoURL, h.dryRepo)
	set("dry-source-revision", &hyd.DrySource.TargetRevision, h.dryRevision)
	set("dry-source-path", &hyd.DrySource.Path, h.dryPath)
	set("sync-source-branch", &hyd.SyncSource.TargetBranch, h.syncBranch)
	set("sync-source-path", &hyd.SyncSource.Path, h.syncPath)
	if fs.Changed("hydrate-to-branch") {
		hyd.HydrateTo = nil
		if h.hydrateToBranch != "" {
			hyd.HydrateTo = &v1alpha1.HydrateTo{TargetBranch: h.hydrateToBranch}
		}
	}
	if hyd.DrySource.RepoURL == "" || hyd.SyncSource.TargetBranch == "" {
		return fmt.Errorf("a source hydrator needs --dry-source-repo and --sync-source-branch")
	}
	spec.SourceHydrator = hyd
	return nil
}
