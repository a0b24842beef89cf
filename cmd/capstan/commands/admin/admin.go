// Package admin holds capstan admin, Argo CD's tools that work on an
// install directly rather than through an API server (export and import of
// backups, settings checks, generate-spec, notification templates, cluster
// and project tools), and capstan render, which renders a source locally.
package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
)

// NewCommand returns capstan admin with its subcommands.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Administrative tools that work without a server"}
	cmd.AddCommand(newAdminHealthCommand(), newAdminAppCommand(), newAdminProjCommand(), newAdminRepoCommand(), newAdminClusterCommand(),
		newAdminSettingsCommand(), newAdminInitialPasswordCommand(), newAdminRedisPasswordCommand(), newAdminDashboardCommand(),
		newAdminNotificationsCommand(), newAdminExportCommand(), newAdminImportCommand())
	return cmd
}

func newAdminHealthCommand() *cobra.Command {
	var file, cmFile, output string
	cmd := &cobra.Command{
		Use:     "health -f OBJECT.yaml [--argocd-cm argocd-cm.yaml]",
		Example: "  capstan admin health -f deployment.yaml\n  kubectl get rollout web -o yaml > r.yaml && capstan admin health -f r.yaml --argocd-cm argocd-cm.yaml",
		Short:   "Print the health the controller would compute for objects, including custom Lua checks",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAdminHealth(cmd.OutOrStdout(), file, cmFile, output)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "YAML or JSON file with one or more objects (required)")
	cmd.Flags().StringVar(&cmFile, "argocd-cm", "", "argocd-cm ConfigMap whose resource.customizations.health.* checks apply")
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide or json")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

type healthResult struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	health.Status
}

func runAdminHealth(w io.Writer, file, cmFile, output string) error {
	var cmData map[string]string
	if cmFile != "" {
		data, err := os.ReadFile(cmFile)
		if err != nil {
			return err
		}
		var cm corev1.ConfigMap
		if err := yaml.UnmarshalStrict(data, &cm); err != nil {
			return fmt.Errorf("%s: %w", cmFile, err)
		}
		cmData = cm.Data
	}
	checker, err := health.NewChecker(cmData)
	if err != nil {
		fmt.Fprintln(os.Stderr, "warning:", err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	objs, err := manifest.Parse(file, data)
	if err != nil {
		return err
	}
	results := make([]healthResult, 0, len(objs))
	for _, o := range objs {
		st, err := checker.Check(o)
		if err != nil {
			return err
		}
		results = append(results, healthResult{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Status: st})
	}
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tHEALTH\tMESSAGE")
	for _, r := range results {
		name := r.Name
		if r.Namespace != "" {
			name = r.Namespace + "/" + r.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Kind, name, r.Status.Status, r.Message)
	}
	return tw.Flush()
}
