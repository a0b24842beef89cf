package admin

import (
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/diff"
	"github.com/capstan-cd/capstan/internal/objpath"
	"github.com/capstan-cd/capstan/internal/settings"
)

// ignoredFieldsCommand prints what argocd-cm's rules of one kind (key:
// ignoreDifferences, or ignoreResourceUpdates; title as Argo CD's
// messages name them) leave out of an object, as Argo CD's
// resource-overrides commands of that name do.
func ignoredFieldsCommand(sf *settingsFlags, use, short, title, key string,
	rules func(*settings.ArgoCD) ([]v1alpha1.ResourceIgnoreDifferences, error)) *cobra.Command {
	var jqTimeout time.Duration
	cmd := &cobra.Command{
		Use:     use + " RESOURCE_YAML_PATH",
		Short:   short,
		Example: "  capstan admin settings resource-overrides " + use + " deploy.yaml --argocd-cm-path argocd-cm.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			obj, cm, err := sf.objectAndCM(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			list, err := rules(&settings.ArgoCD{Data: cm})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			kept, applies, err := diff.WithoutIgnored(obj, list, jqTimeout)
			switch gvk := obj.GroupVersionKind(); {
			case err != nil:
				return err
			case !applies:
				_, err = fmt.Fprintf(out, "%s are not configured for '%s/%s'\n", title, gvk.Group, gvk.Kind)
				return err
			case reflect.DeepEqual(obj.Object, kept.Object):
				_, err = fmt.Fprintf(out, "No fields are ignored by %s settings\n", key)
				return err
			}
			fmt.Fprint(out, "Following fields are ignored:\n\n")
			return printIgnored(out, obj, kept)
		},
	}
	cmd.Flags().DurationVar(&jqTimeout, jqTimeoutFlag, objpath.JQTimeout, "how long each jq path expression may run")
	return cmd
}

// jqTimeoutFlag bounds each jq path expression of ignore rules evaluated
// in this process, as Argo CD's flag of that name does.
const jqTimeoutFlag = "ignore-normalizer-jq-execution-timeout"

// printIgnored prints a unified diff of the object and what is kept of it.
func printIgnored(w io.Writer, obj, kept *unstructured.Unstructured) error {
	before, err := yaml.Marshal(obj.Object)
	if err != nil {
		return err
	}
	after, err := yaml.Marshal(kept.Object)
	if err != nil {
		return err
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(string(before)), B: difflib.SplitLines(string(after)),
		FromFile: obj.GetName(), ToFile: obj.GetName() + " (compared)", Context: 3})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, text)
	return err
}

// ignoreDifferencesRules are argocd-cm's ignoreDifferences customizations
// (not an Application's own).
func ignoreDifferencesRules(cm *settings.ArgoCD) ([]v1alpha1.ResourceIgnoreDifferences, error) {
	return cm.IgnoreDifferencesFor(&v1alpha1.Application{})
}

// ignoreResourceUpdatesRules are the fields whose changes do not refresh
// an Application.
func ignoreResourceUpdatesRules(cm *settings.ArgoCD) ([]v1alpha1.ResourceIgnoreDifferences, error) {
	rules, _, err := cm.IgnoreResourceUpdates()
	return rules, err
}
