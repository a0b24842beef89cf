package admin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/notifications"
	"github.com/capstan-cd/capstan/internal/settings"
)

// notificationsTool is what the admin notifications commands share: where
// the settings and Applications are read from, and the repo server that
// templates' repo.GetCommitMetadata reads through.
type notificationsTool struct {
	configMap, secret string
	kube              *cmdutil.KubeFlags
	repo              cmdutil.RepoClientFlags
}

// settings reads the notification settings: from the files given, else
// from the cluster.
func (o *notificationsTool) settings(ctx context.Context) (*settings.Notifications, error) {
	var fromCluster *settings.Notifications
	if o.configMap == "" || o.secret == "" {
		c, err := o.kube.Client()
		if err != nil {
			return nil, err
		}
		if fromCluster, err = settings.LoadNotifications(ctx, c, o.kube.Namespace(), "", ""); err != nil {
			return nil, err
		}
	}
	n := &settings.Notifications{Data: map[string]string{}, Secrets: map[string]string{}}
	if fromCluster != nil {
		n = fromCluster
	}
	if o.configMap != "" {
		var cm corev1.ConfigMap
		if err := cmdutil.ReadObject(o.configMap, &cm); err != nil {
			return nil, fmt.Errorf("--config-map: %w", err)
		}
		n.Data = cm.Data
	}
	switch o.secret {
	case "":
	case ":empty":
		n.Secrets = map[string]string{}
	default:
		var s corev1.Secret
		if err := cmdutil.ReadObject(o.secret, &s); err != nil {
			return nil, fmt.Errorf("--secret: %w", err)
		}
		n.Secrets = map[string]string{}
		for k, v := range s.Data {
			n.Secrets[k] = string(v)
		}
		for k, v := range s.StringData {
			n.Secrets[k] = v
		}
	}
	return n, nil
}

// processor parses the settings into a Processor whose console service
// writes to the command's output.
func (o *notificationsTool) processor(cmd *cobra.Command) (*notifications.Processor, *notifications.Config, func(), error) {
	n, err := o.settings(cmd.Context())
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := notifications.Parse(n)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", err)
	}
	var commits notifications.RepoReader
	release := func() {}
	if rc, err := o.repo.Dial(); err == nil {
		commits, release = rc, func() { _ = rc.Close() }
	}
	p := notifications.NewProcessor(cfg, commits, nil)
	p.Use("console", notifications.Console{W: cmd.OutOrStdout()})
	return p, cfg, release, nil
}

// application reads the Application name from the cluster, or from the
// file of that name when there is one.
func (o *notificationsTool) application(ctx context.Context, name string) (map[string]any, error) {
	if st, err := os.Stat(name); err == nil && !st.IsDir() {
		obj := map[string]any{}
		if err := cmdutil.ReadObject(name, &obj); err != nil {
			return nil, err
		}
		return obj, nil
	}
	c, err := o.kube.Client()
	if err != nil {
		return nil, err
	}
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Application"))
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.kube.Namespace(), Name: name}, app); err != nil {
		return nil, err
	}
	return app.Object, nil
}

// newAdminNotificationsCommand is Argo CD's notifications tool tree: look
// at and try the triggers and templates of argocd-notifications-cm.
func newAdminNotificationsCommand() *cobra.Command {
	o := &notificationsTool{}
	cmd := &cobra.Command{Use: "notifications", Short: "Try notification templates and triggers"}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.configMap, "config-map", "", "argocd-notifications-cm ConfigMap file (default: the cluster's)")
	pf.StringVar(&o.secret, "secret", "", `argocd-notifications-secret Secret file, or ":empty" (default: the cluster's)`)
	pf.StringVar(&o.repo.Addr, "argocd-repo-server", "argocd-repo-server:8081", "repo server address, for templates that read commits")
	pf.BoolVar(&o.repo.Plaintext, "argocd-repo-server-plaintext", false, "reach the repo server without TLS")
	pf.BoolVar(&o.repo.Strict, "argocd-repo-server-strict-tls", false, "check the repo server's certificate")
	pf.StringVar(&o.repo.CACertPath, "repo-server-ca-cert-path", "", "file of the CA certificates the repo server's certificate must chain to")
	pf.StringVar(&o.repo.ClientCertPath, "repo-server-client-cert-path", "", "certificate shown to a repo server that asks for one (mutual TLS)")
	pf.StringVar(&o.repo.ClientKeyPath, "repo-server-client-cert-key-path", "", "key of --repo-server-client-cert-path")
	o.repo.CADir = "reposerver/tls"
	o.kube = cmdutil.AddKubeFlags(pf)
	template := &cobra.Command{Use: "template", Short: "Notification templates"}
	template.AddCommand(newTemplateGetCommand(o), newTemplateNotifyCommand(o))
	trigger := &cobra.Command{Use: "trigger", Short: "Notification triggers"}
	trigger.AddCommand(newTriggerGetCommand(o), newTriggerRunCommand(o))
	cmd.AddCommand(template, trigger)
	return cmd
}

// selected are the names asked for (all when none), each of which must
// exist.
func selected[T any](all map[string]T, args []string, what string) ([]string, error) {
	if len(args) == 0 {
		names := make([]string, 0, len(all))
		for name := range all {
			names = append(names, name)
		}
		slices.Sort(names)
		return names, nil
	}
	for _, name := range args {
		if _, ok := all[name]; !ok {
			return nil, fmt.Errorf("%s '%s' is not configured", what, name)
		}
	}
	return args, nil
}

func newTemplateGetCommand(o *notificationsTool) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use: "get [NAME]", Short: "Print notification templates", Args: cobra.MaximumNArgs(1),
		Example: "  capstan admin notifications template get\n  capstan admin notifications template get app-sync-succeeded -o yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := o.settings(cmd.Context())
			if err != nil {
				return err
			}
			cfg, _ := notifications.Parse(n)
			names, err := selected(cfg.Templates, args, "template")
			if err != nil {
				return err
			}
			return printNamed(cmd, output, names, n, settings.NotificationTemplatePrefix, []string{"NAME", "PREVIEW"}, func(name string) []string {
				return []string{name, firstLine(cfg.Templates[name].Message())}
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, name, yaml or json")
	return cmd
}

func newTriggerGetCommand(o *notificationsTool) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use: "get [NAME]", Short: "Print notification triggers", Args: cobra.MaximumNArgs(1),
		Example: "  capstan admin notifications trigger get\n  capstan admin notifications trigger get on-sync-failed -o yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := o.settings(cmd.Context())
			if err != nil {
				return err
			}
			cfg, _ := notifications.Parse(n)
			names, err := selected(cfg.Triggers, args, "trigger")
			if err != nil {
				return err
			}
			return printNamed(cmd, output, names, n, settings.NotificationTriggerPrefix, []string{"NAME", "TEMPLATE", "CONDITION"}, func(name string) []string {
				var templates, conditions []string
				for _, c := range cfg.Triggers[name].Conditions {
					templates = append(templates, c.Send...)
					conditions = append(conditions, c.When)
				}
				return []string{name, strings.Join(templates, ", "), strings.Join(conditions, " | ")}
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, name, yaml or json")
	return cmd
}

// printNamed prints the named entries as a table, as names, or as the
// YAML or JSON the ConfigMap holds for them.
func printNamed(cmd *cobra.Command, output string, names []string, n *settings.Notifications, prefix string, header []string, row func(string) []string) error {
	w := cmd.OutOrStdout()
	switch output {
	case "name":
		for _, name := range names {
			fmt.Fprintln(w, name)
		}
	case "yaml", "json":
		docs := map[string]any{}
		for _, name := range names {
			var v any
			if err := yaml.Unmarshal([]byte(n.Data[prefix+name]), &v); err != nil {
				return err
			}
			docs[name] = v
		}
		return cmdutil.PrintObject(w, docs, output)
	case "wide", "":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, name := range names {
			fmt.Fprintln(tw, strings.Join(row(name), "\t"))
		}
		return tw.Flush()
	default:
		return fmt.Errorf("unknown output format %q: want wide, name, yaml or json", output)
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func newTriggerRunCommand(o *notificationsTool) *cobra.Command {
	return &cobra.Command{
		Use: "run NAME RESOURCE_NAME", Short: "Evaluate a trigger for an Application (by name, or a file)", Args: cobra.ExactArgs(2),
		Example: "  capstan admin notifications trigger run on-sync-status-unknown guestbook",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _, release, err := o.processor(cmd)
			if err != nil {
				return err
			}
			defer release()
			app, err := o.application(cmd.Context(), args[1])
			if err != nil {
				return err
			}
			results, err := p.RunTrigger(cmd.Context(), args[0], app)
			if results == nil && err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CONDITION\tRESULT")
			for _, r := range results {
				fmt.Fprintf(tw, "%s\t%v\n", r.Key, r.Triggered)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return err
		},
	}
}

func newTemplateNotifyCommand(o *notificationsTool) *cobra.Command {
	var recipients []string
	cmd := &cobra.Command{
		Use: "notify NAME RESOURCE_NAME", Short: "Render a template for an Application (by name, or a file) and send it", Args: cobra.ExactArgs(2),
		Example: "  capstan admin notifications template notify app-sync-succeeded guestbook\n" +
			"  capstan admin notifications template notify app-sync-succeeded guestbook --recipient slack:deployments",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, cfg, release, err := o.processor(cmd)
			if err != nil {
				return err
			}
			defer release()
			if _, ok := cfg.Templates[args[0]]; !ok {
				return fmt.Errorf("template '%s' is not configured", args[0])
			}
			app, err := o.application(cmd.Context(), args[1])
			if err != nil {
				return err
			}
			var errs []error
			for _, r := range recipients {
				service, recipient, _ := strings.Cut(r, ":")
				if err := p.Send(cmd.Context(), app, []string{args[0]}, notifications.Destination{Service: service, Recipient: recipient}); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", r, err))
				}
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().StringArrayVar(&recipients, "recipient", []string{"console:stdout"}, "recipient SERVICE:ADDRESS (repeatable)")
	return cmd
}
