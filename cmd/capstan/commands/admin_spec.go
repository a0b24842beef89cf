package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// The admin generate-spec commands print the object their create command
// would make (an Application, an AppProject, a repository or cluster
// Secret) from the same flags, without a server: for GitOps repositories
// that declare Argo CD's own settings.

// specOutput are generate-spec's output flags.
type specOutput struct {
	output string
	inline bool
}

func (o *specOutput) add(cmd *cobra.Command, withInline bool) {
	cmd.Flags().StringVarP(&o.output, "output", "o", "yaml", "output format: json or yaml")
	if withInline {
		cmd.Flags().BoolVarP(&o.inline, "inline", "i", false, "write the result back to the --file it was read from")
	}
}

// write prints obj with its apiVersion and kind, or writes it to file.
func (o *specOutput) write(w io.Writer, obj any, gvk schema.GroupVersionKind, file string) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	doc["apiVersion"], doc["kind"] = gvk.GroupVersion().String(), gvk.Kind
	if meta, ok := doc["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	delete(doc, "status")
	var out []byte
	switch o.output {
	case "json":
		out, err = json.MarshalIndent(doc, "", "  ")
		out = append(out, '\n')
	case "yaml":
		out, err = yaml.Marshal(doc)
	default:
		return fmt.Errorf("--output %q: use json or yaml", o.output)
	}
	if err != nil {
		return err
	}
	if o.inline {
		if file == "" {
			return fmt.Errorf("--inline writes back to --file: name one")
		}
		return os.WriteFile(file, out, 0o644)
	}
	_, err = w.Write(out)
	return err
}

func newAdminAppCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "app", Short: "Application tools that need no server"}
	a := &appCreateFlags{}
	out := &specOutput{}
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
			return out.write(cmd.OutOrStdout(), app, v1alpha1.ApplicationGVK, a.file)
		},
	}
	a.add(gen.Flags())
	out.add(gen, true)
	gen.Flags().BoolVar(&validate, "validate", true, "kept for Argo CD's scripts: nothing is sent to a server to validate")
	unsupported(gen, legacyAppFlags)
	reconcile := notYet("get-reconcile-results PATH", "print the reconcile results of every Application, computed offline", "  capstan admin app get-reconcile-results results.yaml")
	rf := reconcile.Flags()
	rf.String("l", "", "label selector of the Applications")
	rf.String("o", "yaml", "output format: yaml or json")
	rf.Bool("refresh", false, "refresh the Applications first")
	rf.String("repo-server", "", "repo server address")
	rf.Bool("server-side-diff", false, "compare with server-side diff")
	rf.Duration("ignore-normalizer-jq-execution-timeout", 0, "bound of a jq normalizer's run")
	addKubeFlags(rf)
	cmd.AddCommand(gen, reconcile, notYet("diff-reconcile-results PATH1 PATH2", "compare two sets of offline reconcile results", "  capstan admin app diff-reconcile-results before.yaml after.yaml"))
	return cmd
}

func newAdminProjCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "proj", Short: "AppProject tools that need no server"}
	spec := &projSpecFlags{}
	out := &specOutput{}
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
			return out.write(cmd.OutOrStdout(), p, v1alpha1.AppProjectGVK, file)
		},
	}
	spec.add(gen.Flags())
	gen.Flags().StringVarP(&file, "file", "f", "", "read the AppProject from this YAML or JSON file (flags override it)")
	out.add(gen, true)
	cmd.AddCommand(gen, newAdminProjAllowListCommand(), newAdminProjUpdateRolePolicyCommand())
	return cmd
}

func newAdminRepoCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "repo", Short: "Repository tools that need no server"}
	r := &repoAddFlags{}
	out := &specOutput{}
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
			return out.write(cmd.OutOrStdout(), repo.Secret("argocd"), schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "")
		},
	}
	r.add(gen, false)
	out.add(gen, false)
	cmd.AddCommand(gen)
	return cmd
}

func newAdminClusterGenerateSpecCommand() *cobra.Command {
	o := &clusterAddFlags{}
	out := &specOutput{}
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
			return out.write(cmd.OutOrStdout(), sec, schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "")
		},
	}
	o.add(cmd)
	out.add(cmd, false)
	cmd.Flags().StringVar(&o.bearerToken, "bearer-token", "", "the token to reach the cluster with")
	cmd.Flags().BoolVar(&generateToken, "generate-bearer-token", false, "create argocd-manager on the cluster and use its token")
	return cmd
}

// notYet is an Argo CD command whose feature Capstan does not have yet:
// it exists, and says so when run.
func notYet(use, short, example string) *cobra.Command {
	return &cobra.Command{Use: use, Short: short + " (not supported by Capstan yet)", Example: example, RunE: func(cmd *cobra.Command, _ []string) error {
		return fmt.Errorf("%s: not supported by Capstan yet", cmd.CommandPath())
	}}
}
