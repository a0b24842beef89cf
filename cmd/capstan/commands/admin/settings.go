package admin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/engine/actions"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/settings"
)

// settingsFlags pick the settings the admin settings commands check:
// local argocd-cm and argocd-secret files, and with --load-cluster-settings
// the install's own (local files win).
type settingsFlags struct {
	cmPath, secretPath string
	loadCluster        bool
	k                  *cmdutil.KubeFlags
}

// source returns a reader of the settings ConfigMaps and Secrets, and
// the namespace they are read in.
func (sf *settingsFlags) source() (client.Reader, string, error) {
	local := &localObjects{objects: map[string]client.Object{}}
	ns := "argocd"
	if sf.loadCluster {
		c, err := sf.k.Client()
		if err != nil {
			return nil, "", err
		}
		local.fallback, ns = c, sf.k.Namespace()
	}
	for _, f := range []struct {
		path string
		obj  client.Object
		name string
	}{{sf.cmPath, &corev1.ConfigMap{}, settings.CMName}, {sf.secretPath, &corev1.Secret{}, settings.ServerSecretName}} {
		if f.path == "" {
			continue
		}
		if err := cmdutil.ReadObject(f.path, f.obj); err != nil {
			return nil, "", err
		}
		f.obj.SetNamespace(ns)
		f.obj.SetName(f.name)
		local.objects[f.name] = f.obj
	}
	return local, ns, nil
}

// argocdCM reads argocd-cm from the settings' source.
func (sf *settingsFlags) argocdCM(ctx context.Context) (map[string]string, error) {
	r, ns, err := sf.source()
	if err != nil {
		return nil, err
	}
	cm, err := settings.ReadConfigMap(ctx, r, ns, settings.CMName)
	if err != nil {
		return nil, err
	}
	return cm.Data, nil
}

// localObjects is a client.Reader of objects read from files, by name,
// falling back to another reader (the cluster) for the rest.
type localObjects struct {
	objects  map[string]client.Object
	fallback client.Reader
}

func (l *localObjects) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if found, ok := l.objects[key.Name]; ok {
		data, err := yaml.Marshal(found)
		if err != nil {
			return err
		}
		return yaml.Unmarshal(data, obj)
	}
	if l.fallback != nil {
		return l.fallback.Get(ctx, key, obj, opts...)
	}
	return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
}

func (l *localObjects) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if l.fallback != nil {
		return l.fallback.List(ctx, list, opts...)
	}
	return nil
}

func newAdminSettingsCommand() *cobra.Command {
	sf := &settingsFlags{}
	cmd := &cobra.Command{Use: "settings", Short: "Check settings, RBAC policies and resource customizations without a server"}
	pf := cmd.PersistentFlags()
	pf.StringVar(&sf.cmPath, "argocd-cm-path", "", "a local argocd-cm ConfigMap file")
	pf.StringVar(&sf.secretPath, "argocd-secret-path", "", "a local argocd-secret Secret file")
	pf.BoolVar(&sf.loadCluster, "load-cluster-settings", false, "read the install's settings through the kubeconfig (local files win)")
	sf.k = cmdutil.AddKubeFlags(pf)
	rbacCmd := &cobra.Command{Use: "rbac", Short: "Check RBAC policies"}
	rbacCmd.AddCommand(newAdminRBACCanCommand(sf), newAdminRBACValidateCommand(sf))
	overrides := &cobra.Command{Use: "resource-overrides", Short: "Try argocd-cm's resource customizations on a local object"}
	ignoreUpdates := ignoredFieldsCommand(sf, "ignore-resource-updates", "Print the fields whose changes do not refresh an Application (ignoreResourceUpdates)",
		"Ignore resource updates", "ignoreResourceUpdates", ignoreResourceUpdatesRules)
	overrides.AddCommand(newAdminOverrideHealthCommand(sf), newAdminListActionsCommand(sf), newAdminRunActionCommand(sf),
		ignoredFieldsCommand(sf, "ignore-differences", "Print the fields argocd-cm's ignoreDifferences leave out of comparisons", "Ignore differences", "ignoreDifferences", ignoreDifferencesRules),
		ignoreUpdates)
	cmd.AddCommand(rbacCmd, overrides, newAdminSettingsValidateCommand(sf))
	return cmd
}

func newAdminRBACCanCommand(sf *settingsFlags) *cobra.Command {
	var policyFile, defaultRole string
	var builtin, strict, quiet bool
	cmd := &cobra.Command{
		Use:   "can ROLE/SUBJECT ACTION RESOURCE [SUB-RESOURCE]",
		Short: "Answer whether a role or subject may act on a resource; exit 0 for yes, 1 for no",
		Example: "  capstan admin settings rbac can role:readonly get applications --policy-file policy.csv\n" +
			"  capstan admin settings rbac can alice sync applications 'team-a/*' --load-cluster-settings",
		Args: cobra.RangeArgs(3, 4),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := sf.policy(cmd.Context(), policyFile)
			if err != nil {
				return err
			}
			p.NoBuiltin = !builtin
			if cmd.Flags().Changed("default-role") {
				p.Default = defaultRole
			}
			subject, action, resource := args[0], rbac.Action(args[1]), rbac.Resource(args[2])
			object := ""
			if len(args) == 4 {
				object = args[3]
			}
			if strict && !resource.Known() {
				return fmt.Errorf("unknown resource %q (strict): one of %s", resource, knownRBACResources())
			}
			e, err := rbac.New(p)
			if err != nil {
				return err
			}
			if e.Enforce([]string{subject}, resource, action, object) {
				if !quiet {
					fmt.Fprintln(cmd.OutOrStdout(), "Yes")
				}
				return nil
			}
			if !quiet {
				fmt.Fprintln(cmd.OutOrStdout(), "No")
			}
			return cmdutil.ExitError{Code: 1}
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy-file", "", "a CSV policy, or an argocd-rbac-cm ConfigMap (default: the install's with --load-cluster-settings)")
	cmd.Flags().StringVar(&defaultRole, "default-role", "", "the role everyone has (default: policy.default)")
	cmd.Flags().BoolVar(&builtin, "use-builtin-policy", true, "include the built-in role:readonly and role:admin")
	cmd.Flags().BoolVar(&strict, "strict", true, "refuse resources RBAC does not know")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "answer with the exit code only")
	return cmd
}

// knownRBACResources lists the resources of Argo CD's RBAC model, sorted.
func knownRBACResources() string {
	names := make([]string, len(rbac.Resources))
	for i, r := range rbac.Resources {
		names[i] = string(r)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func newAdminRBACValidateCommand(sf *settingsFlags) *cobra.Command {
	var policyFile string
	cmd := &cobra.Command{
		Use:     "validate",
		Short:   "Check that an RBAC policy parses",
		Example: "  capstan admin settings rbac validate --policy-file policy.csv",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := sf.policy(cmd.Context(), policyFile)
			if err != nil {
				return err
			}
			if _, err := rbac.New(p); err != nil {
				return fmt.Errorf("the policy is invalid: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Policy is valid.")
			return nil
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy-file", "", "a CSV policy, or an argocd-rbac-cm ConfigMap")
	return cmd
}

// policy reads an RBAC policy: a CSV file or an argocd-rbac-cm ConfigMap
// file, or the install's argocd-rbac-cm.
func (sf *settingsFlags) policy(ctx context.Context, file string) (rbac.Policy, error) {
	if file == "" {
		if !sf.loadCluster {
			return rbac.Policy{}, fmt.Errorf("name a --policy-file, or read the install's with --load-cluster-settings")
		}
		c, err := sf.k.Client()
		if err != nil {
			return rbac.Policy{}, err
		}
		return rbac.Load(ctx, c, sf.k.Namespace())
	}
	var cm corev1.ConfigMap
	if err := cmdutil.ReadObject(file, &cm); err == nil && cm.Kind == "ConfigMap" {
		return rbac.FromData(cm.Data)
	}
	data, err := cmdutil.ReadBounded(file)
	if err != nil {
		return rbac.Policy{}, err
	}
	return rbac.Policy{CSV: string(data), Scopes: []string{"groups"}}, nil
}

// localObject reads the one object of a YAML or JSON file.
func localObject(path string) (*unstructured.Unstructured, error) {
	data, err := cmdutil.ReadBounded(path)
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Parse(path, data)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s holds %d objects, not one", path, len(objs))
	}
	return objs[0], nil
}

// objectAndCM reads the object in the file at path and the argocd-cm data
// the flags name: what each resource-overrides command works on.
func (sf *settingsFlags) objectAndCM(ctx context.Context, path string) (*unstructured.Unstructured, map[string]string, error) {
	obj, err := localObject(path)
	if err != nil {
		return nil, nil, err
	}
	cm, err := sf.argocdCM(ctx)
	if err != nil {
		return nil, nil, err
	}
	return obj, cm, nil
}

func newAdminOverrideHealthCommand(sf *settingsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "health RESOURCE_YAML_PATH",
		Short:   "Print an object's health, with argocd-cm's custom health checks",
		Example: "  capstan admin settings resource-overrides health rollout.yaml --argocd-cm-path argocd-cm.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			obj, cm, err := sf.objectAndCM(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			checker, err := health.NewChecker(cm)
			if err != nil {
				return err
			}
			st, err := checker.Check(obj)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "STATUS: %s\nMESSAGE: %s\n", st.Status, st.Message)
			return nil
		},
	}
}

func newAdminListActionsCommand(sf *settingsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "list-actions RESOURCE_YAML_PATH",
		Short:   "List the actions an object offers",
		Example: "  capstan admin settings resource-overrides list-actions deployment.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			obj, cm, err := sf.objectAndCM(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			set, err := actions.NewSet(cm)
			if err != nil {
				return err
			}
			list, err := set.For(cmd.Context(), obj)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDISABLED")
			for _, a := range list {
				fmt.Fprintf(tw, "%s\t%t\n", a.Name, a.Disabled)
			}
			return tw.Flush()
		},
	}
}

func newAdminRunActionCommand(sf *settingsFlags) *cobra.Command {
	var params []string
	cmd := &cobra.Command{
		Use:     "run-action RESOURCE_YAML_PATH ACTION",
		Short:   "Print what an action would make of an object",
		Example: "  capstan admin settings resource-overrides run-action cronjob.yaml create-job",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			values := map[string]string{}
			for _, p := range params {
				name, value, ok := strings.Cut(p, "=")
				if !ok || name == "" {
					return fmt.Errorf("--param %q: want NAME=VALUE", p)
				}
				values[name] = value
			}
			obj, cm, err := sf.objectAndCM(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			set, err := actions.NewSet(cm)
			if err != nil {
				return err
			}
			res, err := set.Run(cmd.Context(), obj, args[1], values)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, o := range append([]*unstructured.Unstructured{res.Modified}, res.Created...) {
				if o != nil {
					if err := printYAMLDoc(out, o.Object); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&params, "param", nil, "an action parameter NAME=VALUE (repeatable)")
	return cmd
}

func printYAMLDoc(w io.Writer, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n%s", data)
	return err
}

func newAdminSettingsValidateCommand(sf *settingsFlags) *cobra.Command {
	var groups []string
	cmd := &cobra.Command{
		Use:     "validate",
		Short:   "Check argocd-cm and argocd-secret, group by group",
		Example: "  capstan admin settings validate --argocd-cm-path argocd-cm.yaml\n  capstan admin settings validate --load-cluster-settings --group accounts",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, ns, err := sf.source()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			checks := []struct {
				name  string
				check func() (string, error)
			}{
				{"general", func() (string, error) {
					sso, err := settings.LoadSSO(ctx, r, ns)
					if err != nil {
						return "", err
					}
					return "url: " + orNone(sso.URL), nil
				}},
				{"accounts", func() (string, error) {
					a, err := settings.Accounts(ctx, r, ns)
					return fmt.Sprintf("%d accounts", len(a)), err
				}},
				{"resource-overrides", func() (string, error) {
					cm, err := settings.ReadConfigMap(ctx, r, ns, settings.CMName)
					if err != nil {
						return "", err
					}
					_, err = health.NewChecker(cm.Data)
					return "custom health checks compile", err
				}},
				{"repositories", func() (string, error) {
					repos, err := settings.RepositorySecrets(ctx, r, ns, v1alpha1.SecretTypeRepository)
					return fmt.Sprintf("%d repositories", len(repos)), err
				}},
			}
			failed := false
			for _, c := range checks {
				if len(groups) > 0 && !slices.Contains(groups, c.name) {
					continue
				}
				msg, err := c.check()
				if err != nil {
					failed = true
					fmt.Fprintf(cmd.OutOrStdout(), "❌ %s\n %v\n", c.name, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "✅ %s\n %s\n", c.name, msg)
			}
			if failed {
				return cmdutil.ExitError{Code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&groups, "group", nil, "check only this group: general, accounts, resource-overrides or repositories (repeatable)")
	return cmd
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
