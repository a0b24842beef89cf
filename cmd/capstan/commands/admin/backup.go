package admin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
)

// The backup format of Argo CD's admin export and import: a YAML stream
// of the install's settings ConfigMaps and Secrets, its repository,
// credential and cluster Secrets, AppProjects, Applications and
// ApplicationSets, each with only the metadata that describes it (name,
// labels, annotations, finalizers; the namespace of those outside the
// control namespace).

// backupConfigMaps and backupSecret are the settings objects a backup
// holds by name, the ones Argo CD's export writes and its import knows
// (it refuses a backup with others that exist already); Secrets labelled
// with a secret-type, or annotated as managed by Argo CD, come too.
var backupConfigMaps = []string{"argocd-cm", "argocd-rbac-cm", "argocd-ssh-known-hosts-cm", "argocd-tls-certs-cm"}

const backupSecret = "argocd-secret"

// inBackup says whether a Secret belongs in a backup, as Argo CD decides.
func inBackup(secret *unstructured.Unstructured) bool {
	return secret.GetName() == backupSecret || secret.GetLabels()[v1alpha1.LabelSecretType] != "" ||
		secret.GetAnnotations()[v1alpha1.AnnotationManagedBy] == v1alpha1.ManagedByArgoCD
}

var (
	configMapGVK      = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	secretGVK         = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	applicationSetGVK = v1alpha1.GroupVersion.WithKind("ApplicationSet")
)

// backupObjects lists the install's objects a backup holds, as they are
// in the cluster (export makes them portable).
func backupObjects(ctx context.Context, c client.Client, ns string, appNamespaces, appSetNamespaces []string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	list := func(gvk schema.GroupVersionKind, namespace string, keep func(*unstructured.Unstructured) bool) error {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				return nil // an optional kind (ApplicationSet) that is not installed
			}
			return fmt.Errorf("listing %s in %s: %w", gvk.Kind, namespace, err)
		}
		for i := range l.Items {
			if keep == nil || keep(&l.Items[i]) {
				out = append(out, &l.Items[i])
			}
		}
		return nil
	}
	byName := func(names []string) func(*unstructured.Unstructured) bool {
		return func(o *unstructured.Unstructured) bool { return slices.Contains(names, o.GetName()) }
	}
	steps := []error{
		list(configMapGVK, ns, byName(backupConfigMaps)),
		list(secretGVK, ns, inBackup),
		list(v1alpha1.AppProjectGVK, ns, nil),
	}
	for _, n := range append([]string{ns}, appNamespaces...) {
		steps = append(steps, list(v1alpha1.ApplicationGVK, n, nil))
	}
	for _, n := range append([]string{ns}, appSetNamespaces...) {
		steps = append(steps, list(applicationSetGVK, n, nil))
	}
	for _, err := range steps {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// portable keeps only the metadata that describes an object, and its
// namespace when it is not the control namespace.
func portable(o *unstructured.Unstructured, ns string) {
	keep := unstructured.Unstructured{Object: map[string]any{}}
	keep.SetName(o.GetName())
	if o.GetNamespace() != ns {
		keep.SetNamespace(o.GetNamespace())
	}
	keep.SetLabels(o.GetLabels())
	keep.SetAnnotations(o.GetAnnotations())
	keep.SetFinalizers(o.GetFinalizers())
	o.Object["metadata"] = keep.Object["metadata"]
	if o.GetKind() == v1alpha1.ApplicationKind {
		delete(o.Object, "operation") // an operation in flight is not restored
	}
}

func newAdminExportCommand() *cobra.Command {
	var out string
	var appNamespaces, appSetNamespaces []string
	var stripStatus bool
	var k *cmdutil.KubeFlags
	cmd := &cobra.Command{
		Use:     "export",
		Short:   "Write a backup of the install's settings, projects and Applications",
		Example: "  capstan admin export -n argocd > backup.yaml\n  capstan admin export -o backup.yaml --application-namespaces 'team-*'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			objs, err := backupObjects(cmd.Context(), c, k.Namespace(), appNamespaces, appSetNamespaces)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			bw := bufio.NewWriter(w)
			for _, o := range objs {
				portable(o, k.Namespace())
				if stripStatus {
					delete(o.Object, "status")
				}
				data, err := yaml.Marshal(o.Object)
				if err != nil {
					return err
				}
				fmt.Fprintf(bw, "%s---\n", data)
			}
			return bw.Flush()
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "-", "file to write the backup to (- for standard output)")
	cmd.Flags().StringSliceVar(&appNamespaces, "application-namespaces", nil, "other namespaces whose Applications to include")
	cmd.Flags().StringSliceVar(&appSetNamespaces, "applicationset-namespaces", nil, "other namespaces whose ApplicationSets to include")
	cmd.Flags().BoolVar(&stripStatus, "strip-status", false, "leave every object's status out, for a clean set of manifests to create anew")
	k = cmdutil.AddKubeFlags(cmd.Flags())
	return cmd
}

// importFlags are admin import's options.
type importFlags struct {
	dryRun, prune, verbose, stopOperation, overrideOnConflict, ignoreTracking bool
	skipLabel                                                                 string
	appNamespaces, appSetNamespaces                                           []string
}

func newAdminImportCommand() *cobra.Command {
	o := &importFlags{}
	var k *cmdutil.KubeFlags
	cmd := &cobra.Command{
		Use:   "import SOURCE",
		Short: "Restore a backup made by export (SOURCE a file, or - for standard input)",
		Long: "Creates the objects of the backup that are missing and updates those that differ; with --prune, deletes\n" +
			"the install's objects the backup does not have.",
		Example: "  capstan admin import backup.yaml -n argocd --dry-run\n  capstan admin import - --prune < backup.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var r io.Reader = cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				r = f
			}
			data, err := io.ReadAll(io.LimitReader(r, 1<<30))
			if err != nil {
				return err
			}
			backup, err := manifest.Parse(args[0], data)
			if err != nil {
				return err
			}
			c, err := k.Client()
			if err != nil {
				return err
			}
			return o.restore(cmd.Context(), cmd.OutOrStdout(), c, k.Namespace(), backup)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what would change and change nothing")
	fs.BoolVar(&o.prune, "prune", false, "delete the install's objects the backup does not have")
	fs.BoolVar(&o.verbose, "verbose", false, "also print the objects left as they are")
	fs.BoolVar(&o.stopOperation, "stop-operation", false, "drop the operations of imported Applications")
	fs.BoolVar(&o.overrideOnConflict, "override-on-conflict", false, "retry an update that conflicts with a concurrent change")
	fs.BoolVar(&o.ignoreTracking, "ignore-tracking", false, "keep the tracking label and annotation objects have in the cluster")
	fs.StringVar(&o.skipLabel, "skip-resources-with-label", "", "leave out the backup's objects with this label key")
	fs.StringSliceVar(&o.appNamespaces, "application-namespaces", nil, "other namespaces whose Applications --prune considers")
	fs.StringSliceVar(&o.appSetNamespaces, "applicationset-namespaces", nil, "other namespaces whose ApplicationSets --prune considers")
	k = cmdutil.AddKubeFlags(fs)
	return cmd
}

// backupKey names an object of a backup.
func backupKey(o *unstructured.Unstructured) string {
	return o.GroupVersionKind().GroupKind().String() + "/" + o.GetNamespace() + "/" + o.GetName()
}

// restore creates and updates the backup's objects and, with prune,
// deletes the others.
func (o *importFlags) restore(ctx context.Context, w io.Writer, c client.Client, ns string, backup []*unstructured.Unstructured) error {
	suffix := map[bool]string{true: " (dry run)", false: ""}[o.dryRun]
	wanted := map[string]bool{}
	for _, obj := range backup {
		if o.skipLabel != "" {
			if _, skip := obj.GetLabels()[o.skipLabel]; skip {
				continue
			}
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		if o.stopOperation && obj.GetKind() == v1alpha1.ApplicationKind {
			delete(obj.Object, "operation")
		}
		wanted[backupKey(obj)] = true
		ref := obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), live)
		switch {
		case apierrors.IsNotFound(err):
			if !o.dryRun {
				if err := c.Create(ctx, obj); err != nil {
					return fmt.Errorf("creating %s: %w", ref, err)
				}
			}
			fmt.Fprintf(w, "%s created%s\n", ref, suffix)
		case err != nil:
			return fmt.Errorf("reading %s: %w", ref, err)
		default:
			changed := !o.same(live, obj)
			if changed {
				if err := o.update(ctx, c, live, obj); err != nil {
					return fmt.Errorf("updating %s: %w", ref, err)
				}
			}
			if changed || o.verbose {
				fmt.Fprintf(w, "%s %s%s\n", ref, map[bool]string{true: "updated", false: "unchanged"}[changed], suffix)
			}
		}
	}
	if !o.prune {
		return nil
	}
	current, err := backupObjects(ctx, c, ns, o.appNamespaces, o.appSetNamespaces)
	if err != nil {
		return err
	}
	for _, obj := range current {
		if wanted[backupKey(obj)] {
			continue
		}
		ref := obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
		if !o.dryRun {
			if obj.GetKind() == v1alpha1.ApplicationKind && len(obj.GetFinalizers()) > 0 {
				// Pruning an Application from the backup must not delete
				// what it deployed.
				obj.SetFinalizers(nil)
				if err := c.Update(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("dropping the finalizers of %s: %w", ref, err)
				}
			}
			if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s: %w", ref, err)
			}
		}
		fmt.Fprintf(w, "%s pruned%s\n", ref, suffix)
	}
	return nil
}

// same reports whether the live object already holds what the backup
// has: its data, spec and status, labels, annotations and finalizers.
func (o *importFlags) same(live, backup *unstructured.Unstructured) bool {
	want := o.merged(live, backup)
	return equality.Semantic.DeepEqual(want.Object, live.Object)
}

// merged is the live object with the backup's content.
func (o *importFlags) merged(live, backup *unstructured.Unstructured) *unstructured.Unstructured {
	next := live.DeepCopy()
	for k, v := range backup.Object {
		if k != "metadata" && k != "apiVersion" && k != "kind" {
			next.Object[k] = v
		}
	}
	for k := range next.Object {
		if _, ok := backup.Object[k]; !ok && k != "metadata" && k != "apiVersion" && k != "kind" {
			delete(next.Object, k)
		}
	}
	labels, annotations := backup.GetLabels(), backup.GetAnnotations()
	if o.ignoreTracking {
		labels, annotations = keepTracking(live.GetLabels(), labels), keepTracking(live.GetAnnotations(), annotations)
	}
	next.SetLabels(labels)
	next.SetAnnotations(annotations)
	next.SetFinalizers(backup.GetFinalizers())
	return next
}

// keepTracking is backup with the tracking keys the live object has.
func keepTracking(live, backup map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range backup {
		out[k] = v
	}
	for k, v := range live {
		if strings.HasPrefix(k, "app.kubernetes.io/instance") || k == "argocd.argoproj.io/tracking-id" {
			out[k] = v
		}
	}
	return out
}

// update writes the backup's content over the live object when they
// differ, reading it again after a conflict when asked to.
func (o *importFlags) update(ctx context.Context, c client.Client, live, backup *unstructured.Unstructured) error {
	for attempt := 0; ; attempt++ {
		if o.same(live, backup) || o.dryRun {
			return nil
		}
		err := c.Update(ctx, o.merged(live, backup))
		if err == nil || !apierrors.IsConflict(err) || !o.overrideOnConflict || attempt > 5 {
			return err
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
			return err
		}
	}
}
