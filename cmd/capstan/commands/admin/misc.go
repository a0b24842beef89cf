package admin

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/settings"
)

func newAdminInitialPasswordCommand() *cobra.Command {
	var k *cmdutil.KubeFlags
	cmd := &cobra.Command{
		Use:     "initial-password",
		Short:   "Print admin's initial password, from argocd-initial-admin-secret",
		Example: "  capstan admin initial-password -n argocd",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			sec := &corev1.Secret{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: k.Namespace(), Name: settings.InitialAdminSecretName}, sec); err != nil {
				return fmt.Errorf("reading Secret/%s/%s: %w", k.Namespace(), settings.InitialAdminSecretName, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n\n This password must be only used for first time login. We strongly recommend you update the password using `argocd account update-password`.\n",
				sec.Data["password"])
			return nil
		},
	}
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

// redisSecret holds the password components use with Redis, as Argo
// CD's install names it.
const redisSecret = "argocd-redis"

func newAdminRedisPasswordCommand() *cobra.Command {
	var k *cmdutil.KubeFlags
	cmd := &cobra.Command{
		Use:     "redis-initial-password",
		Short:   "Create the argocd-redis Secret with a random Redis password when it is missing (the password is never printed)",
		Example: "  capstan admin redis-initial-password -n argocd",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			ctx, ns := cmd.Context(), k.Namespace()
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
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

func newAdminDashboardCommand() *cobra.Command {
	var k *cmdutil.KubeFlags
	var port int
	var address string
	cmd := &cobra.Command{
		Use:     "dashboard",
		Short:   "Serve the web UI and the API on this machine, reaching the install through the kubeconfig with its rights",
		Example: "  capstan admin dashboard --port 8080\n  capstan admin dashboard -n argocd --context staging",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := k.RestConfig()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			srv, cleanup, err := cmdutil.CoreServer(ctx, cfg, k.Namespace())
			defer cleanup()
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", net.JoinHostPort(address, strconv.Itoa(port)))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Argo CD UI is available at http://%s\n", l.Addr())
			return srv.Serve(ctx, l)
		},
	}
	cmd.Flags().IntVar(&port, "port", 8080, "port to serve the dashboard on")
	cmd.Flags().StringVar(&address, "address", "localhost", "address to serve the dashboard on")
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}
