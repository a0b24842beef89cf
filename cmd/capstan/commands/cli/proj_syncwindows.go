package cli

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/project"
)

func newProjWindowsCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "windows", Short: "Manage a project's sync windows"}
	add := &windowFlags{}
	addCmd := newProjEditCommand(f, "add PROJECT", "Add a sync window", "  capstan proj windows add team-a --kind deny --schedule \"0 22 * * *\" --duration 8h --applications '*'", 1,
		func(p *v1alpha1.AppProject, _ []string) error {
			w := add.SyncWindow
			if err := project.ValidateWindow(&w); err != nil {
				return err
			}
			p.Spec.SyncWindows = append(p.Spec.SyncWindows, &w)
			return nil
		})
	add.add(addCmd)
	addCmd.Flags().StringVarP(&add.Kind, "kind", "k", "allow", "allow or deny")
	addCmd.Flags().BoolVar(&add.ManualSync, "manual-sync", false, "allow manual syncs while a deny window is open")
	addCmd.Flags().BoolVar(&add.SyncOverrun, "sync-overrun", false, "let a started sync run on after the window ends (allow) or begins (deny)")
	addCmd.Flags().BoolVar(&add.UseAndOperator, "use-and-operator", false, "match Applications, namespaces and clusters all together instead of any")

	update := &windowFlags{}
	updateCmd := newProjEditCommand(f, "update PROJECT ID", "Change a sync window's schedule, duration or scope", "  capstan proj windows update team-a 0 --duration 4h", 2, nil)
	updateCmd.RunE = f.withClient(editProject(windowEdit(func(w *v1alpha1.SyncWindow) error {
		updateCmd.Flags().Visit(func(fl *pflag.Flag) {
			switch fl.Name {
			case "schedule":
				w.Schedule = update.Schedule
			case "duration":
				w.Duration = update.Duration
			case "applications":
				w.Applications = update.Applications
			case "namespaces":
				w.Namespaces = update.Namespaces
			case "clusters":
				w.Clusters = update.Clusters
			case "time-zone":
				w.TimeZone = update.TimeZone
			case "description":
				w.Description = update.Description
			}
		})
		return project.ValidateWindow(w)
	})))
	update.add(updateCmd)

	cmd.AddCommand(addCmd, updateCmd,
		newProjEditCommand(f, "delete PROJECT ID", "Delete a sync window", "  capstan proj windows delete team-a 0", 2,
			func(p *v1alpha1.AppProject, args []string) error {
				i, err := windowIndex(p, args[1])
				if err == nil {
					p.Spec.SyncWindows = append(p.Spec.SyncWindows[:i], p.Spec.SyncWindows[i+1:]...)
				}
				return err
			}),
		newProjEditCommand(f, "enable-manual-sync PROJECT ID", "Allow manual syncs during a sync window", "  capstan proj windows enable-manual-sync team-a 0", 2,
			windowEdit(func(w *v1alpha1.SyncWindow) error { w.ManualSync = true; return nil })),
		newProjEditCommand(f, "disable-manual-sync PROJECT ID", "Refuse manual syncs during a sync window", "  capstan proj windows disable-manual-sync team-a 0", 2,
			windowEdit(func(w *v1alpha1.SyncWindow) error { w.ManualSync = false; return nil })),
		newProjEditCommand(f, "enable-sync-overrun PROJECT ID", "Let a started sync run on when a sync window ends or a deny window begins",
			"  capstan proj windows enable-sync-overrun team-a 0", 2,
			windowEdit(func(w *v1alpha1.SyncWindow) error { w.SyncOverrun = true; return nil })),
		newProjEditCommand(f, "disable-sync-overrun PROJECT ID", "Stop started syncs when a sync window ends or a deny window begins",
			"  capstan proj windows disable-sync-overrun team-a 0", 2,
			windowEdit(func(w *v1alpha1.SyncWindow) error { w.SyncOverrun = false; return nil })),
		newProjWindowsListCommand(f))
	return cmd
}

// windowIndex reads a window ID: its index in the project's list.
func windowIndex(p *v1alpha1.AppProject, id string) (int, error) {
	i, err := strconv.Atoi(id)
	if err != nil || i < 0 || i >= len(p.Spec.SyncWindows) {
		return -1, fmt.Errorf("sync window %s does not exist in project %s (IDs are 0 to %d)", id, p.Name, len(p.Spec.SyncWindows)-1)
	}
	return i, nil
}

// windowEdit is a proj edit function on the window the second argument names.
func windowEdit(edit func(*v1alpha1.SyncWindow) error) func(*v1alpha1.AppProject, []string) error {
	return func(p *v1alpha1.AppProject, args []string) error {
		i, err := windowIndex(p, args[1])
		if err != nil {
			return err
		}
		return edit(p.Spec.SyncWindows[i])
	}
}

func newProjWindowsListCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "list PROJECT",
		Short:   "List a project's sync windows and whether each is open now",
		Example: "  capstan proj windows list team-a\n  capstan proj windows list team-a -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, err := getProj(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if output != "wide" && output != "" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), p.Spec.SyncWindows, output)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tKIND\tSCHEDULE\tDURATION\tAPPLICATIONS\tNAMESPACES\tCLUSTERS\tMANUALSYNC\tTIMEZONE\tUSEANDOPERATOR")
			for i, w := range p.Spec.SyncWindows {
				status := "Inactive"
				if active, err := project.WindowActive(w, time.Now()); err != nil {
					status = "Invalid"
				} else if active {
					status = "Active"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%t\n", i, status, w.Kind, w.Schedule, w.Duration,
					listOrDash(w.Applications), listOrDash(w.Namespaces), listOrDash(w.Clusters), map[bool]string{true: "Enabled", false: "Disabled"}[w.ManualSync],
					cmp.Or(w.TimeZone, "UTC"), w.UseAndOperator)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	return cmd
}

func listOrDash(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ",")
}

func newProjAddDestinationCommand(f *clientFlags) *cobra.Command {
	var byName bool
	cmd := newProjEditCommand(f, "add-destination PROJECT SERVER/NAME NAMESPACE", "Allow a destination cluster (by URL, or by name with --name) and namespace",
		"  capstan proj add-destination team-a https://kubernetes.default.svc team-a\n  capstan proj add-destination team-a in-cluster 'team-a-*' --name", 3, nil)
	cmd.RunE = f.withClient(editProject(func(p *v1alpha1.AppProject, args []string) error {
		d := v1alpha1.ApplicationDestination{Server: args[1], Namespace: args[2]}
		if byName {
			d = v1alpha1.ApplicationDestination{Name: args[1], Namespace: args[2]}
		}
		p.Spec.Destinations = toggle(p.Spec.Destinations, d, true)
		return nil
	}))
	cmd.Flags().BoolVar(&byName, "name", false, "SERVER is a cluster name")
	return cmd
}

// newProjYAMLEditCommand opens a project's spec in $EDITOR and writes back
// what the user saves.
func newProjYAMLEditCommand(f *clientFlags) *cobra.Command {
	cmd := newProjEditCommand(f, "edit PROJECT", "Edit a project's spec in $EDITOR", "  EDITOR=nano capstan proj edit team-a", 1, nil)
	cmd.RunE = f.withClient(editProject(func(p *v1alpha1.AppProject, _ []string) error {
		return editInEditor(cmd, &p.Spec)
	}))
	return cmd
}

// editInEditor writes v as YAML to a private file, runs $EDITOR (vi by
// default) on it and reads it back into v.
func editInEditor(cmd *cobra.Command, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "capstan-edit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "edit.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return err
	}
	editor := strings.Fields(cmp.Or(os.Getenv("EDITOR"), "vi"))
	if len(editor) == 0 {
		return fmt.Errorf("EDITOR is empty")
	}
	// The editor is the user's own setting; the file is ours.
	run := exec.Command(editor[0], append(editor[1:], file)...) // #nosec G204
	run.Stdin, run.Stdout, run.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := run.Run(); err != nil {
		return fmt.Errorf("running the editor %s: %w", editor[0], err)
	}
	edited, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(edited, v); err != nil {
		return fmt.Errorf("reading the edited YAML: %w", err)
	}
	return nil
}
