package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
)

func newProjCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "proj", Short: "Manage AppProjects"}
	cmd.AddCommand(newProjCreateCommand(f), newProjGetCommand(f), newProjListCommand(f), newProjDeleteCommand(f),
		newProjEditCommand(f, "add-source PROJECT URL", "Allow a source repository (a URL or glob)", "  capstan proj add-source team-a https://github.com/team-a/*", 2,
			func(p *v1alpha1.AppProject, args []string) error {
				if !slices.Contains(p.Spec.SourceRepos, args[1]) {
					p.Spec.SourceRepos = append(p.Spec.SourceRepos, args[1])
				}
				return nil
			}),
		newProjAddDestinationCommand(f), newProjSetCommand(f), newProjWindowsCommand(f), newProjRoleCommand(f), newProjYAMLEditCommand(f),
		newProjSourceIntegrityCommand(f))
	cmd.AddCommand(newProjListCommands(f)...)
	cmd.AddCommand(newProjResourceCommands(f)...)
	return cmd
}

// projPath is the API path of the project name.
func projPath(name string) apiclient.Path { return apiclient.PathOf("/api/v1/projects/{name}", name) }

func getProj(ctx context.Context, c *apiclient.Client, name string) (*v1alpha1.AppProject, error) {
	p := &v1alpha1.AppProject{}
	if err := c.Do(ctx, "GET", projPath(name), nil, p); err != nil {
		return nil, fmt.Errorf("getting project %s: %w", name, err)
	}
	return p, nil
}

func putProj(ctx context.Context, c *apiclient.Client, p *v1alpha1.AppProject) error {
	if err := c.Do(ctx, "PUT", projPath(p.Name), map[string]any{"project": p}, nil); err != nil {
		return fmt.Errorf("updating project %s: %w", p.Name, err)
	}
	return nil
}

func newProjCreateCommand(f *clientFlags) *cobra.Command {
	var file string
	var upsert bool
	spec := &projSpecFlags{}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a project",
		Example: "  capstan proj create team-a --description \"Team A\" --src https://github.com/team-a/* --dest https://kubernetes.default.svc,team-a\n" +
			"  capstan proj create -f project.yaml",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := spec.build(cmd.Flags(), file, args)
			if err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.Do(cmd.Context(), "POST", "/api/v1/projects", map[string]any{"project": p, "upsert": upsert}, nil); err != nil {
				return fmt.Errorf("creating project %s: %w", p.Name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project '%s' created\n", p.Name)
			return nil
		},
	}
	spec.add(cmd.Flags())
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the AppProject from this YAML or JSON file")
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace an existing project")
	return cmd
}

// build makes the AppProject the flags (and file, if any) describe.
func (spec *projSpecFlags) build(fs *pflag.FlagSet, file string, args []string) (*v1alpha1.AppProject, error) {
	p := &v1alpha1.AppProject{}
	if file != "" {
		if err := cmdutil.ReadObject(file, p); err != nil {
			return nil, err
		}
	}
	if len(args) == 1 {
		p.Name = args[0]
	}
	if p.Name == "" {
		return nil, fmt.Errorf("a project name is required")
	}
	if err := spec.apply(fs, &p.Spec); err != nil {
		return nil, err
	}
	return p, nil
}

func newProjGetCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "get NAME",
		Short:   "Show a project",
		Example: "  capstan proj get team-a\n  capstan proj get team-a -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, err := getProj(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if output != "wide" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), p, output)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 1, ' ', 0)
			fmt.Fprintf(tw, "Name:\t%s\n", p.Name)
			fmt.Fprintf(tw, "Description:\t%s\n", p.Spec.Description)
			for i, d := range p.Spec.Destinations {
				fmt.Fprintf(tw, "%s\t%s,%s\n", map[bool]string{true: "Destinations:", false: ""}[i == 0], cmp.Or(d.Server, d.Name), d.Namespace)
			}
			fmt.Fprintf(tw, "Repositories:\t%s\n", strings.Join(p.Spec.SourceRepos, ", "))
			var allowed []string
			for _, i := range p.Spec.ClusterResourceWhitelist {
				allowed = append(allowed, i.Group+"/"+i.Kind)
			}
			fmt.Fprintf(tw, "Allowed Cluster Resources:\t%s\n", strings.Join(allowed, ", "))
			for _, r := range p.Spec.Roles {
				fmt.Fprintf(tw, "Role:\t%s (%d policies, %d tokens)\n", r.Name, len(r.Policies), len(r.JWTTokens))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	return cmd
}

func newProjListCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the projects you may see",
		Example: "  capstan proj list",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			var list v1alpha1.AppProjectList
			if err := c.Do(cmd.Context(), "GET", "/api/v1/projects", nil, &list); err != nil {
				return fmt.Errorf("listing projects: %w", err)
			}
			if output != "wide" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), list.Items, output)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDESCRIPTION\tDESTINATIONS\tSOURCES")
			for _, p := range list.Items {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.Name, p.Spec.Description, len(p.Spec.Destinations), strings.Join(p.Spec.SourceRepos, ","))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	return cmd
}

func newProjDeleteCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "delete NAME",
		Short:   "Delete a project no Application uses",
		Example: "  capstan proj delete team-a",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if err := c.Do(cmd.Context(), "DELETE", projPath(args[0]), nil, nil); err != nil {
				return fmt.Errorf("deleting project %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project '%s' deleted\n", args[0])
			return nil
		}),
	}
}

// newProjEditCommand is a command that reads a project, changes it with
// edit and writes it back.
func newProjEditCommand(f *clientFlags, use, short, example string, nargs int, edit func(*v1alpha1.AppProject, []string) error) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.ExactArgs(nargs),
		RunE:    f.withClient(editProject(edit)),
	}
}

// editProject makes a command body that changes the project named by the
// first argument with edit and writes it back.
func editProject(edit func(*v1alpha1.AppProject, []string) error) func(*cobra.Command, []string, *apiclient.Client) error {
	return func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
		p, err := getProj(cmd.Context(), c, args[0])
		if err != nil {
			return err
		}
		if err := edit(p, args); err != nil {
			return err
		}
		return putProj(cmd.Context(), c, p)
	}
}

// durationSeconds parses a Go duration (or a number of seconds) into
// whole seconds.
func durationSeconds(s string) (int64, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", s, err)
	}
	return int64(d.Seconds()), nil
}
