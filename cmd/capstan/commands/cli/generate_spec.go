package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
)

// The generate-spec commands print the object a create command would make
// (an Application, an AppProject, a repository or cluster Secret) from the
// same flags, without a server: for GitOps repositories that declare Argo
// CD's own settings. Argo CD files them under admin; they live here
// because they share the create commands' flags.

// secretGVK is a Secret's group, version and kind.
var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// NewAppGenerateSpecCommand is admin app generate-spec: the Application
// app create would make.
func NewAppGenerateSpecCommand() *cobra.Command {
	a := &appCreateFlags{}
	out := &cmdutil.SpecOutput{}
	var validate bool
	gen := &cobra.Command{
		Use:     "generate-spec APPNAME",
		Short:   "Print the Application app create would make, without a server",
		Example: "  capstan admin app generate-spec guestbook --repo https://github.com/argoproj/argocd-example-apps.git --path guestbook \\\n    --dest-namespace default --dest-server https://kubernetes.default.svc",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			app, err := a.build(cmd.Flags(), args)
			if err != nil {
				return err
			}
			return out.Write(cmd.OutOrStdout(), app, v1alpha1.ApplicationGVK, a.file)
		},
	}
	a.add(gen.Flags())
	out.Add(gen, true)
	gen.Flags().BoolVar(&validate, "validate", true, "kept for Argo CD's scripts: nothing is sent to a server to validate")
	_ = gen.Flags().SetAnnotation("validate", cmdutil.NoEffectAnnotation, []string{"nothing is sent to a server to validate"})
	return gen
}

// NewProjGenerateSpecCommand is admin proj generate-spec: the AppProject
// proj create would make.
func NewProjGenerateSpecCommand() *cobra.Command {
	spec := &projSpecFlags{}
	out := &cmdutil.SpecOutput{}
	var file string
	gen := &cobra.Command{
		Use:     "generate-spec PROJECT",
		Short:   "Print the AppProject proj create would make, without a server",
		Example: "  capstan admin proj generate-spec team-a --src https://github.com/team-a/* --dest https://kubernetes.default.svc,team-a",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := spec.build(cmd.Flags(), file, args)
			if err != nil {
				return err
			}
			return out.Write(cmd.OutOrStdout(), p, v1alpha1.AppProjectGVK, file)
		},
	}
	spec.add(gen.Flags())
	gen.Flags().StringVarP(&file, "file", "f", "", "read the AppProject from this YAML or JSON file (flags override it)")
	out.Add(gen, true)
	return gen
}

// NewRepoGenerateSpecCommand is admin repo generate-spec: the repository
// Secret repo add would write.
func NewRepoGenerateSpecCommand() *cobra.Command {
	r := &repoAddFlags{}
	out := &cmdutil.SpecOutput{}
	gen := &cobra.Command{
		Use:     "generate-spec REPOURL",
		Short:   "Print the repository Secret repo add would write, without a server",
		Example: "  capstan admin repo generate-spec https://github.com/example/app.git --username git --password $TOKEN",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			repo, err := r.build(args[0])
			if err != nil {
				return err
			}
			return out.Write(cmd.OutOrStdout(), repo.Secret("argocd"), secretGVK, "")
		},
	}
	r.add(gen, false)
	out.Add(gen, false)
	return gen
}

// NewClusterGenerateSpecCommand is admin cluster generate-spec: the
// cluster Secret cluster add would write.
func NewClusterGenerateSpecCommand() *cobra.Command {
	o := &clusterAddFlags{}
	out := &cmdutil.SpecOutput{}
	var generateToken bool
	cmd := &cobra.Command{
		Use:   "generate-spec CONTEXT",
		Short: "Print the cluster Secret cluster add would write, without a server",
		Long: "Reads CONTEXT from the kubeconfig and prints the cluster Secret for it, with --bearer-token, or with\n" +
			"--generate-bearer-token the token of argocd-manager (created there as cluster add creates it).",
		Example: "  capstan admin cluster generate-spec prod --bearer-token $TOKEN\n  capstan admin cluster generate-spec prod --generate-bearer-token",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.yes, o.noToken = true, !generateToken
			spec, err := o.spec(cmd, args[0])
			if err != nil {
				return err
			}
			sec, err := spec.Secret("argocd")
			if err != nil {
				return err
			}
			return out.Write(cmd.OutOrStdout(), sec, secretGVK, "")
		},
	}
	o.add(cmd)
	out.Add(cmd, false)
	cmd.Flags().StringVar(&o.bearerToken, "bearer-token", "", "the token to reach the cluster with")
	cmd.Flags().BoolVar(&generateToken, "generate-bearer-token", false, "create argocd-manager on the cluster and use its token")
	return cmd
}
