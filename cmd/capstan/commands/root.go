// Package commands is capstan's command line: it puts together the CLI
// that talks to an API server as Argo CD's does (package cli), the admin
// tools that work on an install directly (package admin) and the commands
// that run Capstan's components (package component), and decides which of
// them a binary runs by the name it was started under. Its tests run the
// whole binary's commands against real API servers, Argo CD's own CLI
// among the clients.
package commands

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/admin"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cli"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/component"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/k8sauth"
)

// NewRoot returns the capstan command with every subcommand attached.
func NewRoot() *cobra.Command {
	root, _ := newRootAs("capstan")
	return root
}

// ArgoCDName is the name under which the binary behaves as Argo CD's CLI:
// a copy or link of capstan named argocd keeps Argo CD's configuration
// file, so scripts written for argocd need no edit.
const ArgoCDName = "argocd"

// newRootAs returns the root command of the binary run as program, and
// what releases the resources its commands hold once it has run (--core's
// server and render cache).
func newRootAs(program string) (*cobra.Command, func()) {
	root := &cobra.Command{
		Use:          program,
		Short:        "GitOps continuous delivery for Kubernetes, compatible with Argo CD",
		SilenceUsage: true,
		// main prints errors as one line; see Execute.
		SilenceErrors: true,
	}
	root.AddCommand(admin.NewRenderCommand(), admin.NewCommand())
	root.AddCommand(component.Commands()...)
	root.AddCommand(k8sauth.NewCommand())
	// Argo CD's global client flags are the root's, as in Argo CD's CLI.
	release := cli.AddCommands(root, program == ArgoCDName)
	return root, release
}

// Execute runs the command line and returns the process exit code: 0, or
// 1 after printing the error on one line of stderr (a command may choose
// another code, as app diff does).
func Execute(args []string, stdout, stderr io.Writer) int {
	return ExecuteAs("capstan", args, stdout, stderr)
}

// ComponentNames are the program names of Argo CD's components, whose
// install manifests run them by those names from one image; called so,
// capstan runs its own component of that job.
var ComponentNames = map[string]string{
	"argocd-server":                    "server",
	"argocd-repo-server":               "repo-server",
	"argocd-application-controller":    "controller",
	"argocd-dex":                       "dex",
	"argocd-applicationset-controller": "applicationset-controller",
	"argocd-notifications":             "notifications-controller",
	"argocd-cmp-server":                "cmp-server",
	"argocd-git-ask-pass":              "git-ask-pass",
	"argocd-image-updater":             "image-updater",
	"argocd-k8s-auth":                  "k8s-auth",
}

// Program decides what a binary called name (its argv[0]'s base) is, and
// the arguments to run: Argo CD's CLI as argocd, a component under a
// component's name, else capstan.
func Program(name string, args []string) (string, []string) {
	name = strings.TrimSuffix(name, ".exe")
	if name == ArgoCDName {
		return ArgoCDName, args
	}
	if sub, ok := ComponentNames[name]; ok {
		return "capstan", append([]string{sub}, args...)
	}
	return "capstan", args
}

// ExecuteAs is Execute for the binary run under the name program: as
// argocd, it is Argo CD's CLI.
func ExecuteAs(program string, args []string, stdout, stderr io.Writer) int {
	root, release := newRootAs(program)
	defer release()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Ctrl-C or SIGTERM cancels what the command is doing (its API calls
	// among it); a second signal ends the program at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	if err := root.ExecuteContext(ctx); err != nil {
		code, show := cmdutil.ExitCode(err)
		if show {
			fmt.Fprintln(stderr, "error:", strings.Join(strings.Fields(err.Error()), " "))
		}
		return code
	}
	return 0
}
