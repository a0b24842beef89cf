package cli

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
)

// roleOf returns the index of the project's role name, or an error
// naming both.
func roleOf(p *v1alpha1.AppProject, name string) (int, error) {
	i := slices.IndexFunc(p.Spec.Roles, func(r v1alpha1.ProjectRole) bool { return r.Name == name })
	if i < 0 {
		return -1, fmt.Errorf("role '%s' does not exist in project '%s'", name, p.Name)
	}
	return i, nil
}

// roleEdit is a proj edit function on the role named by the second argument.
func roleEdit(edit func(r *v1alpha1.ProjectRole, p *v1alpha1.AppProject, args []string) error) func(*v1alpha1.AppProject, []string) error {
	return func(p *v1alpha1.AppProject, args []string) error {
		i, err := roleOf(p, args[1])
		if err != nil {
			return err
		}
		return edit(&p.Spec.Roles[i], p, args)
	}
}

// policyFlags build a role's policy line the way Argo CD's CLI does.
type policyFlags struct{ action, object, permission, resource string }

func (pf *policyFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&pf.action, "action", "a", "", "action, such as get, sync or update")
	cmd.Flags().StringVarP(&pf.object, "object", "o", "", "object within the project, such as an Application name or *")
	cmd.Flags().StringVarP(&pf.permission, "permission", "p", "allow", "allow or deny")
	cmd.Flags().StringVarP(&pf.resource, "resource", "r", "applications", "resource, such as applications or logs")
}

func (pf *policyFlags) line(project, role string) string {
	return fmt.Sprintf("p, proj:%s:%s, %s, %s, %s/%s, %s", project, role, pf.resource, pf.action, project, pf.object, pf.permission)
}

func newProjRoleCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "role", Short: "Manage a project's roles and their tokens"}
	var description string
	create := newProjEditCommand(f, "create PROJECT ROLE", "Create a project role", "  capstan proj role create team-a ci --description \"CI pipeline\"", 2,
		func(p *v1alpha1.AppProject, args []string) error {
			if slices.ContainsFunc(p.Spec.Roles, func(r v1alpha1.ProjectRole) bool { return r.Name == args[1] }) {
				return fmt.Errorf("role '%s' already exists in project '%s'", args[1], p.Name)
			}
			p.Spec.Roles = append(p.Spec.Roles, v1alpha1.ProjectRole{Name: args[1], Description: description})
			return nil
		})
	create.Flags().StringVarP(&description, "description", "", "", "description")
	del := newProjEditCommand(f, "delete PROJECT ROLE", "Delete a project role", "  capstan proj role delete team-a ci", 2,
		func(p *v1alpha1.AppProject, args []string) error {
			i, err := roleOf(p, args[1])
			if err == nil {
				p.Spec.Roles = slices.Delete(p.Spec.Roles, i, i+1)
			}
			return err
		})
	add, remove := &policyFlags{}, &policyFlags{}
	addPolicy := newProjEditCommand(f, "add-policy PROJECT ROLE", "Add a policy to a project role", "  capstan proj role add-policy team-a ci --action sync --object '*'", 2,
		roleEdit(func(r *v1alpha1.ProjectRole, p *v1alpha1.AppProject, args []string) error {
			r.Policies = toggle(r.Policies, add.line(p.Name, r.Name), true)
			return nil
		}))
	add.add(addPolicy)
	removePolicy := newProjEditCommand(f, "remove-policy PROJECT ROLE", "Remove a policy from a project role", "  capstan proj role remove-policy team-a ci --action sync --object '*'", 2,
		roleEdit(func(r *v1alpha1.ProjectRole, p *v1alpha1.AppProject, args []string) error {
			r.Policies = toggle(r.Policies, remove.line(p.Name, r.Name), false)
			return nil
		}))
	remove.add(removePolicy)
	addGroup := newProjEditCommand(f, "add-group PROJECT ROLE GROUP-CLAIM", "Bind an SSO group to a project role", "  capstan proj role add-group team-a ci team-a-admins", 3,
		roleEdit(func(r *v1alpha1.ProjectRole, p *v1alpha1.AppProject, args []string) error {
			if slices.Contains(r.Groups, args[2]) {
				return fmt.Errorf("group '%s' already in role '%s'", args[2], r.Name)
			}
			r.Groups = append(r.Groups, args[2])
			return nil
		}))
	removeGroup := newProjEditCommand(f, "remove-group PROJECT ROLE GROUP-CLAIM", "Unbind an SSO group from a project role", "  capstan proj role remove-group team-a ci team-a-admins", 3,
		roleEdit(func(r *v1alpha1.ProjectRole, p *v1alpha1.AppProject, args []string) error {
			if !slices.Contains(r.Groups, args[2]) {
				return fmt.Errorf("group '%s' not in role '%s'", args[2], r.Name)
			}
			r.Groups = toggle(r.Groups, args[2], false)
			return nil
		}))
	cmd.AddCommand(create, del, addPolicy, removePolicy, addGroup, removeGroup, newProjRoleListCommand(f), newProjRoleGetCommand(f),
		newProjRoleCreateTokenCommand(f), newProjRoleListTokensCommand(f), newProjRoleDeleteTokenCommand(f))
	return cmd
}

func newProjRoleListCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "list PROJECT",
		Short:   "List a project's roles",
		Example: "  capstan proj role list team-a",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, err := getProj(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			switch output {
			case "name":
				for _, r := range p.Spec.Roles {
					fmt.Fprintln(cmd.OutOrStdout(), r.Name)
				}
			case "wide", "":
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ROLE-NAME\tDESCRIPTION")
				for _, r := range p.Spec.Roles {
					fmt.Fprintf(tw, "%s\t%s\n", r.Name, r.Description)
				}
				return tw.Flush()
			default:
				return cmdutil.PrintObject(cmd.OutOrStdout(), p.Spec.Roles, output)
			}
			return nil
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, name, json or yaml")
	return cmd
}

func newProjRoleGetCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "get PROJECT ROLE",
		Short:   "Show a project role: its policies, groups and tokens",
		Example: "  capstan proj role get team-a ci",
		Args:    cobra.ExactArgs(2),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, err := getProj(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			i, err := roleOf(p, args[1])
			if err != nil {
				return err
			}
			r := p.Spec.Roles[i]
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Role Name:     %s\nDescription:   %s\nPolicies:\n", r.Name, r.Description)
			for _, line := range r.Policies {
				fmt.Fprintln(w, line)
			}
			fmt.Fprintln(w, "Groups:")
			for _, g := range r.Groups {
				fmt.Fprintln(w, g)
			}
			fmt.Fprintln(w, "JWT Tokens:")
			return printTokens(w, roleTokens(p, r), false)
		}),
	}
}

// roleTokens are a role's issued tokens, from the spec or (newer
// projects) the status.
func roleTokens(p *v1alpha1.AppProject, r v1alpha1.ProjectRole) []v1alpha1.JWTToken {
	if t, ok := p.Status.JWTTokensByRole[r.Name]; ok && len(t.Items) > 0 {
		return t.Items
	}
	return r.JWTTokens
}

func printTokens(w interface{ Write([]byte) (int, error) }, tokens []v1alpha1.JWTToken, unix bool) error {
	when := func(t int64) string {
		switch {
		case unix:
			return strconv.FormatInt(t, 10)
		case t == 0:
			return "<none>"
		}
		return time.Unix(t, 0).UTC().Format(time.RFC3339)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tISSUED AT\tEXPIRES AT")
	for _, t := range tokens {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.ID, when(t.IssuedAt), when(t.ExpiresAt))
	}
	return tw.Flush()
}

func newProjRoleListTokensCommand(f *clientFlags) *cobra.Command {
	var unix bool
	cmd := &cobra.Command{
		Use:     "list-tokens PROJECT ROLE",
		Short:   "List the tokens issued for a project role",
		Example: "  capstan proj role list-tokens team-a ci\n  capstan proj role list-tokens team-a ci --unixtime",
		Args:    cobra.ExactArgs(2),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, err := getProj(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			i, err := roleOf(p, args[1])
			if err != nil {
				return err
			}
			return printTokens(cmd.OutOrStdout(), roleTokens(p, p.Spec.Roles[i]), unix)
		}),
	}
	cmd.Flags().BoolVarP(&unix, "unixtime", "u", false, "print times as Unix seconds")
	return cmd
}

func newProjRoleCreateTokenCommand(f *clientFlags) *cobra.Command {
	var expiresIn, id string
	var tokenOnly bool
	cmd := &cobra.Command{
		Use:     "create-token PROJECT ROLE",
		Short:   "Issue a JWT for a project role (printed once; it can be revoked)",
		Example: "  capstan proj role create-token team-a ci --expires-in 720h --id pipeline\n  capstan proj role create-token team-a ci -t",
		Args:    cobra.ExactArgs(2),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			secs, err := durationSeconds(expiresIn)
			if err != nil {
				return err
			}
			var resp struct{ Token string }
			if err := c.Do(cmd.Context(), "POST", apiclient.PathOf("/api/v1/projects/{name}/roles/{role}/token", args[0], args[1]), map[string]any{"expiresIn": secs, "id": id}, &resp); err != nil {
				return fmt.Errorf("creating a token for role %s of project %s: %w", args[1], args[0], err)
			}
			if tokenOnly {
				fmt.Fprintln(cmd.OutOrStdout(), resp.Token)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Create token succeeded for proj:%s:%s.\n  ID: %s\n  Token: %s\n", args[0], args[1], cmp.Or(id, "(generated)"), resp.Token)
			return nil
		}),
	}
	cmd.Flags().StringVarP(&expiresIn, "expires-in", "e", "0s", "lifetime, such as 24h (0s: never expires)")
	cmd.Flags().StringVarP(&id, "id", "i", "", "token id (default: generated)")
	cmd.Flags().BoolVarP(&tokenOnly, "token-only", "t", false, "print the token alone")
	return cmd
}

func newProjRoleDeleteTokenCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "delete-token PROJECT ROLE ISSUED-AT",
		Short:   "Revoke a project role's token, named by its issue time (or its ID)",
		Example: "  capstan proj role delete-token team-a ci 1735689600\n  capstan proj role delete-token team-a ci pipeline",
		Args:    cobra.ExactArgs(3),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			iat, id := args[2], ""
			if _, err := strconv.ParseInt(iat, 10, 64); err != nil {
				iat, id = "0", args[2]
			}
			path := apiclient.PathOf("/api/v1/projects/{name}/roles/{role}/token/{iat}", args[0], args[1], iat).With(url.Values{"id": {id}})
			if err := c.Do(cmd.Context(), "DELETE", path, nil, nil); err != nil {
				return fmt.Errorf("revoking token %s: %w", args[2], err)
			}
			return nil
		}),
	}
}
