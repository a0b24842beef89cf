package commands

import (
	"cmp"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
)

func newProjCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "proj", Short: "Manage AppProjects"}
	cmd.AddCommand(newProjCreateCommand(f), newProjGetCommand(f), newProjListCommand(f), newProjDeleteCommand(f),
		newProjEditCommand(f, "add-source PROJECT URL", "Allow a source repository (a URL or glob)", 2,
			func(p *v1alpha1.AppProject, args []string) error {
				if !slices.Contains(p.Spec.SourceRepos, args[1]) {
					p.Spec.SourceRepos = append(p.Spec.SourceRepos, args[1])
				}
				return nil
			}),
		newProjEditCommand(f, "add-destination PROJECT SERVER NAMESPACE", "Allow a destination cluster and namespace", 3,
			func(p *v1alpha1.AppProject, args []string) error {
				d := v1alpha1.ApplicationDestination{Server: args[1], Namespace: args[2]}
				if !slices.Contains(p.Spec.Destinations, d) {
					p.Spec.Destinations = append(p.Spec.Destinations, d)
				}
				return nil
			}),
		newProjEditCommand(f, "allow-cluster-resource PROJECT GROUP KIND", "Allow a cluster-scoped kind (use \"\" for the core group)", 3,
			func(p *v1alpha1.AppProject, args []string) error {
				item := v1alpha1.ClusterResourceRestrictionItem{Group: args[1], Kind: args[2]}
				if !slices.ContainsFunc(p.Spec.ClusterResourceWhitelist, func(i v1alpha1.ClusterResourceRestrictionItem) bool {
					return i.Group == item.Group && i.Kind == item.Kind
				}) {
					p.Spec.ClusterResourceWhitelist = append(p.Spec.ClusterResourceWhitelist, item)
				}
				return nil
			}),
		newProjRoleCommand(f))
	return cmd
}

func projPath(name, suffix string) string { return "/api/v1/projects/" + url.PathEscape(name) + suffix }

func getProj(c *apiclient.Client, name string) (*v1alpha1.AppProject, error) {
	p := &v1alpha1.AppProject{}
	if err := c.Do("GET", projPath(name, ""), nil, p); err != nil {
		return nil, fmt.Errorf("getting project %s: %w", name, err)
	}
	return p, nil
}

func putProj(c *apiclient.Client, p *v1alpha1.AppProject) error {
	if err := c.Do("PUT", projPath(p.Name, ""), map[string]any{"project": p}, nil); err != nil {
		return fmt.Errorf("updating project %s: %w", p.Name, err)
	}
	return nil
}

func newProjCreateCommand(f *clientFlags) *cobra.Command {
	var description, file string
	var sources, dests []string
	var upsert bool
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a project",
		Example: "  capstan proj create team-a --description \"Team A\" --src https://github.com/team-a/* --dest https://kubernetes.default.svc,team-a\n" +
			"  capstan proj create -f project.yaml",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := &v1alpha1.AppProject{}
			if file != "" {
				data, err := os.ReadFile(file)
				if err != nil {
					return err
				}
				if err := yaml.UnmarshalStrict(data, p); err != nil {
					return fmt.Errorf("reading %s: %w", file, err)
				}
			}
			if len(args) == 1 {
				p.Name = args[0]
			}
			if p.Name == "" {
				return fmt.Errorf("a project name is required")
			}
			if description != "" {
				p.Spec.Description = description
			}
			p.Spec.SourceRepos = append(p.Spec.SourceRepos, sources...)
			for _, d := range dests {
				server, ns, ok := strings.Cut(d, ",")
				if !ok {
					return fmt.Errorf("destination %q is not SERVER,NAMESPACE", d)
				}
				p.Spec.Destinations = append(p.Spec.Destinations, v1alpha1.ApplicationDestination{Server: server, Namespace: ns})
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.Do("POST", "/api/v1/projects", map[string]any{"project": p, "upsert": upsert}, nil); err != nil {
				return fmt.Errorf("creating project %s: %w", p.Name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project '%s' created\n", p.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "description")
	cmd.Flags().StringArrayVarP(&sources, "src", "s", nil, "allowed source repository URL or glob (repeatable)")
	cmd.Flags().StringArrayVarP(&dests, "dest", "d", nil, "allowed destination SERVER,NAMESPACE (repeatable)")
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the AppProject from this YAML or JSON file")
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace an existing project")
	return cmd
}

func newProjGetCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "get NAME",
		Short:   "Show a project",
		Example: "  capstan proj get team-a\n  capstan proj get team-a -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, err := getProj(c, args[0])
			if err != nil {
				return err
			}
			if output != "wide" {
				return printObject(cmd.OutOrStdout(), p, output)
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
			if err := c.Do("GET", "/api/v1/projects", nil, &list); err != nil {
				return fmt.Errorf("listing projects: %w", err)
			}
			if output != "wide" {
				return printObject(cmd.OutOrStdout(), list.Items, output)
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
			if err := c.Do("DELETE", projPath(args[0], ""), nil, nil); err != nil {
				return fmt.Errorf("deleting project %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project '%s' deleted\n", args[0])
			return nil
		}),
	}
}

// newProjEditCommand is a command that reads a project, changes it and
// writes it back.
func newProjEditCommand(f *clientFlags, use, short string, nargs int, edit func(*v1alpha1.AppProject, []string) error) *cobra.Command {
	name := strings.Fields(use)[0]
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  capstan proj " + map[string]string{"add-source": "add-source team-a https://github.com/team-a/*", "add-destination": "add-destination team-a https://kubernetes.default.svc team-a", "allow-cluster-resource": "allow-cluster-resource team-a \"\" Namespace"}[name],
		Args:    cobra.ExactArgs(nargs),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, err := getProj(c, args[0])
			if err != nil {
				return err
			}
			if err := edit(p, args); err != nil {
				return err
			}
			return putProj(c, p)
		}),
	}
}

func newProjRoleCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "role", Short: "Manage a project's roles and their tokens"}
	var description string
	create := newProjEditCommand(f, "create PROJECT ROLE", "Create a project role", 2, func(p *v1alpha1.AppProject, args []string) error {
		if slices.ContainsFunc(p.Spec.Roles, func(r v1alpha1.ProjectRole) bool { return r.Name == args[1] }) {
			return fmt.Errorf("role %s already exists in project %s", args[1], p.Name)
		}
		p.Spec.Roles = append(p.Spec.Roles, v1alpha1.ProjectRole{Name: args[1], Description: description})
		return nil
	})
	create.Example = "  capstan proj role create team-a ci --description \"CI pipeline\""
	create.Flags().StringVar(&description, "description", "", "description")

	var action, object, permission string
	addPolicy := newProjEditCommand(f, "add-policy PROJECT ROLE", "Add a policy to a project role", 2, func(p *v1alpha1.AppProject, args []string) error {
		i := slices.IndexFunc(p.Spec.Roles, func(r v1alpha1.ProjectRole) bool { return r.Name == args[1] })
		if i < 0 {
			return fmt.Errorf("role %s does not exist in project %s", args[1], p.Name)
		}
		line := fmt.Sprintf("p, proj:%s:%s, applications, %s, %s/%s, %s", p.Name, args[1], action, p.Name, object, permission)
		if !slices.Contains(p.Spec.Roles[i].Policies, line) {
			p.Spec.Roles[i].Policies = append(p.Spec.Roles[i].Policies, line)
		}
		return nil
	})
	addPolicy.Example = "  capstan proj role add-policy team-a ci --action sync --object '*'"
	addPolicy.Flags().StringVarP(&action, "action", "a", "get", "action on applications: get, create, update, delete, sync, override")
	addPolicy.Flags().StringVarP(&object, "object", "o", "*", "application name or glob, within the project")
	addPolicy.Flags().StringVarP(&permission, "permission", "p", "allow", "allow or deny")

	var expiresIn, id string
	createToken := &cobra.Command{
		Use:     "create-token PROJECT ROLE",
		Short:   "Issue a JWT for a project role (printed once; it can be revoked)",
		Example: "  capstan proj role create-token team-a ci --expires-in 720h --id pipeline",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			secs, err := durationSeconds(expiresIn)
			if err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			var resp struct{ Token string }
			if err := c.Do("POST", projPath(args[0], "/roles/"+url.PathEscape(args[1])+"/token"), map[string]any{"expiresIn": secs, "id": id}, &resp); err != nil {
				return fmt.Errorf("creating a token for role %s of project %s: %w", args[1], args[0], err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), resp.Token)
			return nil
		},
	}
	createToken.Flags().StringVarP(&expiresIn, "expires-in", "e", "0s", "lifetime, such as 24h (0s: never expires)")
	createToken.Flags().StringVarP(&id, "id", "i", "", "token id (default: generated)")

	deleteToken := &cobra.Command{
		Use:     "delete-token PROJECT ROLE ID",
		Short:   "Revoke a project role's token",
		Example: "  capstan proj role delete-token team-a ci pipeline",
		Args:    cobra.ExactArgs(3),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if err := c.Do("DELETE", projPath(args[0], "/roles/"+url.PathEscape(args[1])+"/token/0?id="+url.QueryEscape(args[2])), nil, nil); err != nil {
				return fmt.Errorf("revoking token %s: %w", args[2], err)
			}
			return nil
		}),
	}
	cmd.AddCommand(create, addPolicy, createToken, deleteToken)
	return cmd
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
