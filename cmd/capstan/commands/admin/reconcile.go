package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/objpath"
)

// reconcileResult is one Application's reconciled state, as Argo CD's
// admin app get-reconcile-results records it.
type reconcileResult struct {
	Name       string                          `json:"name"`
	Health     v1alpha1.HealthStatusCode       `json:"health"`
	Sync       *v1alpha1.SyncStatus            `json:"sync"`
	Conditions []v1alpha1.ApplicationCondition `json:"conditions"`
}

// reconcileResults is a results file.
type reconcileResults struct {
	Applications []reconcileResult `json:"applications"`
}

// maxResultsBytes bounds a results file read by diff-reconcile-results.
const maxResultsBytes = 64 << 20

func newReconcileResultsCommand() *cobra.Command {
	var k *cmdutil.KubeFlags
	var selector, format, repoServer string
	var refresh bool
	var jqTimeout time.Duration
	cmd := &cobra.Command{
		Use:     "get-reconcile-results PATH",
		Short:   "Write every Application's sync status, health and conditions to a file, to compare two installs or two versions",
		Example: "  capstan admin app get-reconcile-results before.yaml -n argocd\n  capstan admin app get-reconcile-results results.json --o json --l team=web",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "yaml" && format != "json" {
				return fmt.Errorf("format %s is not supported (yaml or json)", format)
			}
			sel, err := labels.Parse(selector)
			if err != nil {
				return fmt.Errorf("--l: %w", err)
			}
			c, err := k.Client()
			if err != nil {
				return err
			}
			var apps v1alpha1.ApplicationList
			if err := c.List(cmd.Context(), &apps, client.InNamespace(k.Namespace()), client.MatchingLabelsSelector{Selector: sel}); err != nil {
				return fmt.Errorf("listing Applications in %s: %w", k.Namespace(), err)
			}
			result := recorded
			if refresh {
				reader, done, err := refreshReader(k, c, repoServer, jqTimeout)
				if err != nil {
					return err
				}
				defer done()
				result = func(app *v1alpha1.Application) reconcileResult {
					rec := reader.Reconcile(cmd.Context(), app)
					return reconcileResult{Name: app.Name, Health: rec.Health, Sync: &rec.Sync, Conditions: rec.Conditions}
				}
			}
			res := reconcileResults{Applications: []reconcileResult{}}
			for i := range apps.Items {
				res.Applications = append(res.Applications, result(&apps.Items[i]))
			}
			sort.Slice(res.Applications, func(i, j int) bool { return res.Applications[i].Name < res.Applications[j].Name })
			var data []byte
			if format == "json" {
				data, err = json.Marshal(res)
			} else {
				data, err = yaml.Marshal(res)
			}
			if err != nil {
				return err
			}
			return os.WriteFile(args[0], data, 0o644) //nolint:gosec // a report, as Argo CD writes it
		},
	}
	cmd.Flags().StringVar(&selector, "l", "", "label selector of the Applications")
	cmd.Flags().StringVar(&format, "o", "yaml", "output format: yaml or json")
	cmd.Flags().Bool("server-side-diff", false, "has no effect: Capstan always compares with a server-side dry run")
	cmd.Flags().DurationVar(&jqTimeout, jqTimeoutFlag, objpath.JQTimeout, "with --refresh, how long each jq path expression of ignoreDifferences may run")
	cmd.Flags().BoolVar(&refresh, "refresh", false, "reconcile each Application now (render its sources, compare them with the cluster) instead of reading its recorded status; nothing is written")
	cmd.Flags().StringVar(&repoServer, "repo-server", "", "with --refresh, render through this repo server (host:port, over TLS) instead of in this process")
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

// recorded is an Application's results as its status records them.
func recorded(app *v1alpha1.Application) reconcileResult {
	return reconcileResult{Name: app.Name, Health: app.Status.Health.Status, Sync: &app.Status.Sync, Conditions: app.Status.Conditions}
}

// refreshReader reconciles Applications in this process: sources rendered
// here, or by the repo server at repoServer, compared with the clusters
// the install's Secrets name.
func refreshReader(k *cmdutil.KubeFlags, c client.Client, repoServer string, jqTimeout time.Duration) (*appstate.Reader, func(), error) {
	cfg, err := k.RestConfig()
	if err != nil {
		return nil, nil, err
	}
	reader := &appstate.Reader{Client: c, Namespace: k.Namespace(),
		Clusters:     &cluster.Registry{Reader: c, Namespace: k.Namespace(), InCluster: cfg},
		Destinations: engine.NewDestinations(engine.DestinationOptions{JQTimeout: jqTimeout})}
	if repoServer != "" {
		rc, err := (&cmdutil.RepoClientFlags{Addr: repoServer}).Dial()
		if err != nil {
			return nil, nil, fmt.Errorf("--repo-server %s: %w", repoServer, err)
		}
		reader.Renderer = rc
		return reader, func() { _ = rc.Close() }, nil
	}
	renderer, cleanup, err := cmdutil.LocalRenderer(c, k.Namespace())
	if err != nil {
		return nil, nil, err
	}
	reader.Renderer = renderer
	return reader, cleanup, nil
}

func newDiffReconcileResultsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "diff-reconcile-results PATH1 PATH2",
		Short:   "Print, for each Application of two results files, how its results differ",
		Example: "  capstan admin app diff-reconcile-results before.yaml after.yaml",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var files [2]map[string]string
			for i, path := range args {
				byName, err := readReconcileResults(path)
				if err != nil {
					return err
				}
				files[i] = byName
			}
			var names []string
			for _, f := range files {
				for name := range f {
					if !slices.Contains(names, name) {
						names = append(names, name)
					}
				}
			}
			sort.Strings(names)
			out := cmd.OutOrStdout()
			for _, name := range names {
				fmt.Fprintln(out, name)
				text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
					A: difflib.SplitLines(files[0][name]), B: difflib.SplitLines(files[1][name]),
					FromFile: args[0], ToFile: args[1], Context: 3,
				})
				if err != nil {
					return err
				}
				if _, err := io.WriteString(out, text); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// readReconcileResults reads a results file (YAML or JSON) into each
// Application's results as YAML, by name.
func readReconcileResults(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxResultsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxResultsBytes {
		return nil, fmt.Errorf("%s: over %d bytes", path, maxResultsBytes)
	}
	var res reconcileResults
	if err := yaml.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]string{}
	for _, r := range res.Applications {
		y, err := yaml.Marshal(r)
		if err != nil {
			return nil, err
		}
		out[r.Name] = strings.TrimRight(string(y), "\n") + "\n"
	}
	return out, nil
}
