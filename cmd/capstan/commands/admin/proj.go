package admin

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/project"
)

func newAdminProjAllowListCommand() *cobra.Command {
	var out string
	var k *cmdutil.KubeFlags
	cmd := &cobra.Command{
		Use:   "generate-allow-list CLUSTERROLE_PATH PROJ_NAME",
		Short: "Print an AppProject that allows the kinds a ClusterRole may create",
		Long: "Reads a ClusterRole and, through the cluster's API discovery, prints an AppProject whose cluster and\n" +
			"namespaced allow lists are the kinds the role may create (or do anything with).",
		Example: "  capstan admin proj generate-allow-list deployer-role.yaml team-a -o team-a.yaml",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var role rbacv1.ClusterRole
			if err := cmdutil.ReadObject(args[0], &role); err != nil {
				return err
			}
			cfg, err := k.RestConfig()
			if err != nil {
				return err
			}
			dc, err := discovery.NewDiscoveryClientForConfig(cfg)
			if err != nil {
				return err
			}
			lists, err := dc.ServerPreferredResources()
			if err != nil && len(lists) == 0 {
				return fmt.Errorf("reading the cluster's API resources: %w", err)
			}
			p := allowList(args[1], &role, lists)
			w := cmd.OutOrStdout()
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			return (&cmdutil.SpecOutput{Output: "yaml"}).Write(w, p, v1alpha1.AppProjectGVK, "")
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "-", "file to write the AppProject to (- for standard output)")
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

// allowList is an AppProject allowing the kinds role may create.
func allowList(name string, role *rbacv1.ClusterRole, lists []*metav1.APIResourceList) *v1alpha1.AppProject {
	p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: name}}
	seen := map[schema.GroupKind]bool{}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range list.APIResources {
			gk := schema.GroupKind{Group: gv.Group, Kind: res.Kind}
			if strings.Contains(res.Name, "/") || seen[gk] || !mayCreate(role, gv.Group, res.Name) {
				continue
			}
			seen[gk] = true
			if res.Namespaced {
				p.Spec.NamespaceResourceWhitelist = append(p.Spec.NamespaceResourceWhitelist, metav1.GroupKind{Group: gk.Group, Kind: gk.Kind})
			} else {
				p.Spec.ClusterResourceWhitelist = append(p.Spec.ClusterResourceWhitelist, v1alpha1.ClusterResourceRestrictionItem{Group: gk.Group, Kind: gk.Kind})
			}
		}
	}
	return p
}

// mayCreate reports whether a rule of role lets it create resource.
func mayCreate(role *rbacv1.ClusterRole, group, resource string) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	for _, rule := range role.Rules {
		if has(rule.APIGroups, group) && has(rule.Resources, resource) && has(rule.Verbs, "create") {
			return true
		}
	}
	return false
}

func newAdminProjUpdateRolePolicyCommand() *cobra.Command {
	var role, resource, scope, permission string
	var dryRun bool
	var k *cmdutil.KubeFlags
	cmd := &cobra.Command{
		Use:   "update-role-policy PROJECT_GLOB MODIFICATION ACTION",
		Short: "Set or remove one policy in the matching roles of every matching project",
		Long: "MODIFICATION is set or remove. For each project matching PROJECT_GLOB and each of its roles matching\n" +
			"--role, the policy 'p, proj:<project>:<role>, <resource>, ACTION, <project>/<scope>, <permission>' is added\n" +
			"(set) or taken out (remove).",
		Example: "  capstan admin proj update-role-policy '*' set 'action/apps/Deployment/restart' --role '*deployer*' --dry-run=false\n" +
			"  capstan admin proj update-role-policy 'team-*' remove override --role '*'",
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			glob, modification, action := args[0], args[1], args[2]
			if modification != "set" && modification != "remove" {
				return fmt.Errorf("modification %q: use set or remove", modification)
			}
			c, err := k.Client()
			if err != nil {
				return err
			}
			var projects v1alpha1.AppProjectList
			if err := c.List(cmd.Context(), &projects, client.InNamespace(k.Namespace())); err != nil {
				return err
			}
			for i := range projects.Items {
				p := &projects.Items[i]
				if !project.GlobMatch(glob, p.Name) {
					continue
				}
				changed := false
				for j := range p.Spec.Roles {
					r := &p.Spec.Roles[j]
					if !project.GlobMatch(role, r.Name) {
						continue
					}
					line := fmt.Sprintf("p, proj:%s:%s, %s, %s, %s/%s, %s", p.Name, r.Name, resource, action, p.Name, scope, permission)
					had := slices.ContainsFunc(r.Policies, func(l string) bool { return samePolicy(l, line) })
					if had == (modification == "set") {
						continue // already so
					}
					r.Policies = slices.DeleteFunc(r.Policies, func(l string) bool { return samePolicy(l, line) })
					if modification == "set" {
						r.Policies = append(r.Policies, line)
					}
					changed = true
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s/%s: %s\n", map[string]string{"set": "Setting", "remove": "Removing"}[modification], p.Name, r.Name, line)
				}
				if changed && !dryRun {
					if err := c.Update(cmd.Context(), p); err != nil {
						return fmt.Errorf("updating AppProject/%s/%s: %w", p.Namespace, p.Name, err)
					}
				}
			}
			if dryRun {
				fmt.Fprintln(cmd.OutOrStdout(), "(dry run: nothing was changed; pass --dry-run=false)")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&role, "role", "*", "glob of the roles to change")
	cmd.Flags().StringVar(&resource, "resource", "applications", "the policy's resource")
	cmd.Flags().StringVar(&scope, "scope", "*", "the policy's object, within the project")
	cmd.Flags().StringVar(&permission, "permission", "allow", "allow or deny")
	cmd.Flags().BoolVar(&dryRun, "dry-run", true, "only show what would change")
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

// samePolicy compares two policy lines, ignoring spacing.
func samePolicy(a, b string) bool {
	norm := func(s string) string {
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return strings.Join(parts, ",")
	}
	return norm(a) == norm(b)
}
