package cli

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/appstate"
)

// Exit codes of app diff, as Argo CD's.
const (
	diffNone  = 0
	diffFound = 1
	diffError = 2
)

func newAppDiffCommand(f *clientFlags) *cobra.Command {
	var color, appNamespace string
	var refresh, hardRefresh, exitCode, serverSide bool
	var diffExitCode int
	var targets targetFlags
	cmd := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show how the live resources differ from Git; exit 0 in sync, 1 with differences, 2 on error",
		Example: "  capstan app diff guestbook\n  capstan app diff guestbook --color never > guestbook.diff\n" +
			"  capstan app diff guestbook || echo \"out of sync\"",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return cmdutil.ExitError{Code: diffError, Err: err}
			}
			q := url.Values{"appNamespace": {appNamespace}}
			if refresh || hardRefresh {
				q.Set("refresh", map[bool]string{false: "normal", true: "hard"}[hardRefresh])
				if err := c.Do(cmd.Context(), "GET", appPath(args[0], "").With(q), nil, nil); err != nil {
					return cmdutil.ExitError{Code: diffError, Err: fmt.Errorf("refreshing application %s: %w", args[0], err)}
				}
				q.Del("refresh")
			}
			var resp struct{ Items []appstate.ResourceDiff }
			if targets.given() {
				manifests, err := targets.manifests(cmd.Context(), c, qualified(args[0], appNamespace))
				if err != nil {
					return cmdutil.ExitError{Code: diffError, Err: err}
				}
				body := map[string]any{"appNamespace": appNamespace, "targetManifests": manifests}
				if err := c.Do(cmd.Context(), "POST", appPath(args[0], "/server-side-diff"), body, &resp); err != nil {
					return cmdutil.ExitError{Code: diffError, Err: fmt.Errorf("comparing application %s: %w", args[0], err)}
				}
			} else if err := c.Do(cmd.Context(), "GET", appPath(args[0], "/managed-resources").With(q), nil, &resp); err != nil {
				return cmdutil.ExitError{Code: diffError, Err: fmt.Errorf("comparing application %s: %w", args[0], err)}
			}
			colored := color == "always" || (color == "auto" && isTerminal(cmd.OutOrStdout()))
			found := false
			for _, d := range resp.Items {
				if !d.Modified || d.Hook {
					continue
				}
				found = true
				if err := printDiff(cmd.OutOrStdout(), d, colored); err != nil {
					return cmdutil.ExitError{Code: diffError, Err: err}
				}
			}
			if found && exitCode {
				return cmdutil.ExitError{Code: diffExitCode}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&color, "color", "auto", "colour the diff: auto (on a terminal), always or never")
	cmd.Flags().BoolVar(&refresh, "refresh", false, "compare with the latest state of Git first")
	cmd.Flags().BoolVar(&hardRefresh, "hard-refresh", false, "like --refresh, also rendering anew")
	cmd.Flags().BoolVar(&exitCode, "exit-code", true, "exit with --diff-exit-code when there are differences (false: exit 0)")
	cmd.Flags().IntVar(&diffExitCode, "diff-exit-code", diffFound, "exit code when there are differences")
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	targets.add(cmd.Flags(), "compare with this revision of the source instead of its target revision")
	cmd.Flags().BoolVar(&serverSide, "server-side-diff", false, "compare through a server-side dry run of the sync, which Capstan always does")
	serverSideBatches(cmd)
	cmd.Flags().BoolVar(&targets.serverSideGenerate, "server-side-generate", false, "with --local, send the directory's files to the server, which renders them")
	cmd.Flags().StringArrayVar(&targets.localIncludes, "local-include", []string{"*.yaml", "*.yml", "*.json"},
		"with --server-side-generate, the file names (patterns) of --local's files to send")
	serverJQTimeout(cmd)
	return cmd
}

// serverJQTimeout adds Argo CD's --ignore-normalizer-jq-execution-timeout
// to a command whose differences the server computes, under its own bound.
func serverJQTimeout(cmd *cobra.Command) {
	cmdutil.NoEffect(cmd, map[string]string{"ignore-normalizer-jq-execution-timeout": "duration"},
		"the server computes the differences, under its own bound on jq path expressions (the controller's --ignore-normalizer-jq-execution-timeout-seconds)")
}

// printDiff prints one resource's difference as a unified diff of YAML,
// live state first.
func printDiff(w io.Writer, d appstate.ResourceDiff, colored bool) error {
	live, err := toYAML(d.NormalizedLiveState)
	if err != nil {
		return err
	}
	target, err := toYAML(d.PredictedLiveState)
	if err != nil {
		return err
	}
	ref := d.Name
	if d.Namespace != "" {
		ref = d.Namespace + "/" + d.Name
	}
	fmt.Fprintf(w, "\n===== %s/%s %s ======\n", d.Group, d.Kind, ref)
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(live), B: difflib.SplitLines(target),
		FromFile: "live", ToFile: "desired", Context: 3,
	})
	if err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if colored && line != "" {
			switch {
			case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
			case strings.HasPrefix(line, "-"):
				line = "\x1b[31m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n"
			case strings.HasPrefix(line, "+"):
				line = "\x1b[32m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n"
			case strings.HasPrefix(line, "@@"):
				line = "\x1b[36m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n"
			}
		}
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}

// toYAML turns a JSON state into YAML; empty stays empty.
func toYAML(state string) (string, error) {
	if state == "" || state == "null" { // Argo CD's API writes an absent state as null
		return "", nil
	}
	y, err := yaml.JSONToYAML([]byte(state))
	return string(y), err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// serverSideBatches adds Argo CD's flags that split a server-side diff
// into batches of requests. Capstan's server diffs an Application in one
// request, so they only have their values checked.
func serverSideBatches(cmd *cobra.Command) {
	var concurrency, batchKB int
	const why = "Capstan's server diffs an Application in one request"
	cmd.Flags().IntVar(&concurrency, "server-side-diff-concurrency", -1, "accepted for Argo CD's scripts: "+why+" (0 is refused)")
	cmd.Flags().IntVar(&batchKB, "server-side-diff-max-batch-kb", 250, "accepted for Argo CD's scripts: "+why)
	for _, name := range []string{"server-side-diff-concurrency", "server-side-diff-max-batch-kb"} {
		_ = cmd.Flags().SetAnnotation(name, cmdutil.NoEffectAnnotation, []string{why})
	}
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if concurrency == 0 {
			return errors.New("invalid value for --server-side-diff-concurrency: 0 is not allowed (use -1 for unlimited, or a positive number to limit concurrency)")
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}
