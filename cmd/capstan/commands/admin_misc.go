package commands

import (
	"crypto/rand"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/settings"
)

func newAdminInitialPasswordCommand() *cobra.Command {
	var k *kubeFlags
	cmd := &cobra.Command{
		Use:     "initial-password",
		Short:   "Print admin's initial password, from argocd-initial-admin-secret",
		Example: "  capstan admin initial-password -n argocd",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := k.client()
			if err != nil {
				return err
			}
			sec := &corev1.Secret{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: k.namespace(), Name: settings.InitialAdminSecretName}, sec); err != nil {
				return fmt.Errorf("reading Secret/%s/%s: %w", k.namespace(), settings.InitialAdminSecretName, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n\n This password must be only used for first time login. We strongly recommend you update the password using `argocd account update-password`.\n",
				sec.Data["password"])
			return nil
		},
	}
	k = addKubeFlags(cmd.Flags())
	return cmd
}

// redisSecret holds the password components use with Redis, as Argo
// CD's install names it.
const redisSecret = "argocd-redis"

func newAdminRedisPasswordCommand() *cobra.Command {
	var k *kubeFlags
	cmd := &cobra.Command{
		Use:     "redis-initial-password",
		Short:   "Create the argocd-redis Secret with a random Redis password when it is missing (the password is never printed)",
		Example: "  capstan admin redis-initial-password -n argocd",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := k.client()
			if err != nil {
				return err
			}
			ctx, ns := cmd.Context(), k.namespace()
			sec := &corev1.Secret{}
			err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: redisSecret}, sec)
			if apierrors.IsNotFound(err) {
				sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: redisSecret, Namespace: ns,
					Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}}, Data: map[string][]byte{"auth": []byte(rand.Text())}}
				if err = c.Create(ctx, sec); apierrors.IsAlreadyExists(err) {
					err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: redisSecret}, sec)
				}
			}
			if err != nil {
				return fmt.Errorf("read Secret/%s/%s: %w", ns, redisSecret, err)
			}
			if len(sec.Data["auth"]) == 0 {
				return fmt.Errorf("the auth key of Secret/%s/%s is empty: Redis would run without a password", ns, redisSecret)
			}
			// This runs as an init container: its output lands in pod logs,
			// so it tells that the password is there, never the password.
			fmt.Fprintf(cmd.OutOrStdout(), "Argo CD Redis secret state confirmed: secret name %s.\n", redisSecret)
			return nil
		},
	}
	k = addKubeFlags(cmd.Flags())
	return cmd
}

func newAdminDashboardCommand() *cobra.Command {
	cmd := notYet("dashboard", "serve the web UI on this machine, reaching the install through the kubeconfig", "  capstan admin dashboard --port 8080")
	cmd.Flags().Int("port", 8080, "port to serve the dashboard on")
	cmd.Flags().String("address", "localhost", "address to serve the dashboard on")
	addKubeFlags(cmd.Flags())
	return cmd
}

// newAdminNotificationsCommand is Argo CD's notifications tool tree;
// Capstan has no notifications controller yet, and each command says so.
func newAdminNotificationsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "notifications", Short: "Try notification templates and triggers (not supported by Capstan yet)"}
	pf := cmd.PersistentFlags()
	pf.String("config-map", "", "argocd-notifications-cm ConfigMap file")
	pf.String("secret", "", "argocd-notifications-secret Secret file")
	pf.String("argocd-repo-server", "argocd-repo-server:8081", "repo server address")
	pf.Bool("argocd-repo-server-plaintext", false, "reach the repo server without TLS")
	pf.Bool("argocd-repo-server-strict-tls", false, "check the repo server's certificate")
	addKubeFlags(pf)
	template := &cobra.Command{Use: "template", Short: "Notification templates"}
	templateGet := notYet("get [NAME]", "print notification templates", "  capstan admin notifications template get app-sync-succeeded")
	templateGet.Flags().StringP("output", "o", "wide", "output format")
	templateNotify := notYet("notify NAME RESOURCE_NAME", "render a template for an Application and send it", "  capstan admin notifications template notify app-sync-succeeded guestbook")
	templateNotify.Flags().StringArray("recipient", nil, "recipient SERVICE:ADDRESS (repeatable)")
	template.AddCommand(templateGet, templateNotify)
	trigger := &cobra.Command{Use: "trigger", Short: "Notification triggers"}
	triggerGet := notYet("get [NAME]", "print notification triggers", "  capstan admin notifications trigger get on-sync-failed")
	triggerGet.Flags().StringP("output", "o", "wide", "output format")
	trigger.AddCommand(triggerGet, notYet("run NAME RESOURCE_NAME", "evaluate a trigger for an Application", "  capstan admin notifications trigger run on-sync-failed guestbook"))
	cmd.AddCommand(template, trigger)
	return cmd
}
