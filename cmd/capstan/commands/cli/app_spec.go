package cli

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
)

// specFlags are Argo CD's flags that describe an Application's spec,
// shared by app create and app set. Only flags the user gave change the
// spec.
type specFlags struct {
	repo, path, revision, chart, releaseName     string
	tagPrefix                                    string
	destServer, destName, destNamespace, project string
	syncPolicy                                   string
	autoPrune, selfHeal, recurse                 bool
	helmSets, helmSetStrings, values             []string
	// params are Argo CD's older form of --helm-set (-p NAME=VALUE);
	// env is a flag Argo CD keeps and ignores.
	params                       []string
	env                          string
	kustomizeImages, syncOptions []string
	allowEmpty                   bool
	historyLimit                 int
	sourcePosition               int
	retry                        retryFlags
	sourceFlags
	hydrator hydratorSpecFlags
}

func (s *specFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&s.repo, "repo", "", "repository URL (Git, or a Helm repository with --helm-chart)")
	fs.StringVar(&s.path, "path", "", "directory of the manifests in the repository")
	fs.StringVar(&s.revision, "revision", "", "branch, tag, commit or chart version to follow (default HEAD)")
	fs.StringVar(&s.tagPrefix, "tag-prefix", "", "keep only Git tags with this prefix when --revision is a semantic version constraint")
	fs.StringVar(&s.chart, "helm-chart", "", "chart name, for a Helm repository source")
	fs.StringVar(&s.releaseName, "release-name", "", "Helm release name (default: the Application's name)")
	fs.StringVar(&s.destServer, "dest-server", "", "destination cluster's API server URL")
	fs.StringVar(&s.destName, "dest-name", "", "destination cluster's name")
	fs.StringVar(&s.destNamespace, "dest-namespace", "", "destination namespace")
	fs.StringVar(&s.project, "project", "", "AppProject (default \"default\")")
	fs.StringVar(&s.syncPolicy, "sync-policy", "", "sync policy: manual (none) or automated (auto)")
	fs.BoolVar(&s.autoPrune, "auto-prune", false, "automated sync also deletes resources no longer in Git")
	fs.BoolVar(&s.selfHeal, "self-heal", false, "automated sync also undoes changes made in the cluster")
	fs.BoolVar(&s.recurse, "directory-recurse", false, "read manifests in subdirectories too")
	fs.StringArrayVar(&s.helmSets, "helm-set", nil, "Helm parameter NAME=VALUE (repeatable)")
	fs.StringArrayVar(&s.helmSetStrings, "helm-set-string", nil, "Helm string parameter NAME=VALUE (repeatable)")
	fs.StringArrayVarP(&s.params, "parameter", "p", nil, "Helm parameter NAME=VALUE, as --helm-set (repeatable; Helm sources only)")
	fs.StringVar(&s.env, "env", "", "kept for Argo CD's scripts: it has no effect, as in Argo CD")
	fs.StringArrayVar(&s.values, "values", nil, "Helm values file in the repository (repeatable)")
	fs.StringArrayVar(&s.kustomizeImages, "kustomize-image", nil, "Kustomize image override, such as nginx=nginx:1.27 (repeatable)")
	fs.StringArrayVar(&s.syncOptions, "sync-option", nil, "sync option, such as CreateNamespace=true (repeatable)")
	fs.BoolVar(&s.allowEmpty, "allow-empty", false, "let automated sync prune every resource when the source renders none")
	fs.IntVar(&s.historyLimit, "revision-history-limit", 10, "how many syncs the history keeps")
	s.retry.add(fs, "sync-retry-")
	s.sourceFlags.add(fs)
	s.hydrator.add(fs)
}

// apply changes app by the flags that were given.
func (s *specFlags) apply(fs *pflag.FlagSet, app *v1alpha1.Application) error {
	changed := fs.Changed
	spec := &app.Spec
	if err := s.hydrator.apply(fs, app); err != nil {
		return err
	}
	if spec.Source == nil && len(spec.Sources) == 0 && spec.SourceHydrator == nil {
		spec.Source = &v1alpha1.ApplicationSource{}
	}
	src := spec.Source
	if src == nil {
		switch {
		case spec.SourceHydrator != nil && (changed("repo") || changed("path") || changed("revision") || changed("helm-chart")):
			return fmt.Errorf("application %s has a source hydrator: change its dry source with --dry-source-repo, --dry-source-path and --dry-source-revision", app.Name)
		case s.sourcePosition >= 1 && s.sourcePosition <= len(spec.Sources):
			src = &spec.Sources[s.sourcePosition-1]
		case s.sourcePosition > len(spec.Sources):
			return fmt.Errorf("--source-position %d: application %s has %d sources", s.sourcePosition, app.Name, len(spec.Sources))
		case changed("repo") || changed("path") || changed("revision") || changed("tag-prefix") || changed("helm-chart") || changed("helm-set") || changed("parameter") ||
			changed("helm-set-string") || changed("values") || changed("kustomize-image") || changed("directory-recurse") || changed("release-name"):
			return fmt.Errorf("application %s has several sources: pick one with --source-position", app.Name)
		default:
			src = &v1alpha1.ApplicationSource{}
		}
	}
	if err := s.sourceFlags.apply(fs, src); err != nil {
		return err
	}
	if changed("revision-history-limit") {
		limit := int64(s.historyLimit)
		spec.RevisionHistoryLimit = &limit
	}
	set := func(flag string, dst *string, v string) {
		if changed(flag) {
			*dst = v
		}
	}
	set("repo", &src.RepoURL, s.repo)
	set("path", &src.Path, s.path)
	set("revision", &src.TargetRevision, s.revision)
	set("tag-prefix", &src.TagPrefix, s.tagPrefix)
	set("helm-chart", &src.Chart, s.chart)
	set("dest-server", &spec.Destination.Server, s.destServer)
	set("dest-name", &spec.Destination.Name, s.destName)
	set("dest-namespace", &spec.Destination.Namespace, s.destNamespace)
	set("project", &spec.Project, s.project)
	if changed("directory-recurse") {
		if src.Directory == nil {
			src.Directory = &v1alpha1.ApplicationSourceDirectory{}
		}
		src.Directory.Recurse = s.recurse
	}
	helm := func() *v1alpha1.ApplicationSourceHelm {
		if src.Helm == nil {
			src.Helm = &v1alpha1.ApplicationSourceHelm{}
		}
		return src.Helm
	}
	if changed("release-name") {
		helm().ReleaseName = s.releaseName
	}
	for _, v := range s.values {
		if h := helm(); !slices.Contains(h.ValueFiles, v) {
			h.ValueFiles = append(h.ValueFiles, v)
		}
	}
	if len(s.params) > 0 && src.Helm == nil && (src.Kustomize != nil || src.Directory != nil || src.Plugin != nil) {
		return fmt.Errorf("application %s: parameters can only be set against Helm applications", app.Name)
	}
	for i, list := range [][]string{append(slices.Clone(s.helmSets), s.params...), s.helmSetStrings} {
		for _, kv := range list {
			name, value, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				return fmt.Errorf("helm parameter %q is not NAME=VALUE", kv)
			}
			h := helm()
			p := v1alpha1.HelmParameter{Name: name, Value: value, ForceString: i == 1}
			if j := slices.IndexFunc(h.Parameters, func(p v1alpha1.HelmParameter) bool { return p.Name == name }); j >= 0 {
				h.Parameters[j] = p
			} else {
				h.Parameters = append(h.Parameters, p)
			}
		}
	}
	for _, img := range s.kustomizeImages {
		if src.Kustomize == nil {
			src.Kustomize = &v1alpha1.ApplicationSourceKustomize{}
		}
		k := src.Kustomize
		if j := slices.IndexFunc(k.Images, func(i v1alpha1.KustomizeImage) bool { return imageName(string(i)) == imageName(img) }); j >= 0 {
			k.Images[j] = v1alpha1.KustomizeImage(img)
		} else {
			k.Images = append(k.Images, v1alpha1.KustomizeImage(img))
		}
	}
	if changed("sync-policy") {
		switch s.syncPolicy {
		case "automated", "auto", "automatic":
			if spec.SyncPolicy == nil {
				spec.SyncPolicy = &v1alpha1.SyncPolicy{}
			}
			if spec.SyncPolicy.Automated == nil {
				spec.SyncPolicy.Automated = &v1alpha1.SyncPolicyAutomated{}
			}
		case "manual", "none":
			if spec.SyncPolicy != nil {
				spec.SyncPolicy.Automated = nil
			}
		default:
			return fmt.Errorf("sync policy %q: use automated or none", s.syncPolicy)
		}
	}
	if changed("auto-prune") || changed("self-heal") || changed("allow-empty") {
		if spec.SyncPolicy == nil || spec.SyncPolicy.Automated == nil {
			return fmt.Errorf("--auto-prune, --self-heal and --allow-empty need --sync-policy automated")
		}
		if changed("allow-empty") {
			spec.SyncPolicy.Automated.AllowEmpty = s.allowEmpty
		}
		if changed("auto-prune") {
			spec.SyncPolicy.Automated.Prune = s.autoPrune
		}
		if changed("self-heal") {
			spec.SyncPolicy.Automated.SelfHeal = s.selfHeal
		}
	}
	retry, err := s.retry.strategy(fs)
	if err != nil {
		return err
	}
	if retry != nil {
		if spec.SyncPolicy == nil {
			spec.SyncPolicy = &v1alpha1.SyncPolicy{}
		}
		spec.SyncPolicy.Retry = retry
	}
	for _, o := range s.syncOptions {
		if spec.SyncPolicy == nil {
			spec.SyncPolicy = &v1alpha1.SyncPolicy{}
		}
		key, _, _ := strings.Cut(o, "=")
		spec.SyncPolicy.SyncOptions = slices.DeleteFunc(spec.SyncPolicy.SyncOptions, func(x string) bool { return strings.HasPrefix(x, key+"=") })
		spec.SyncPolicy.SyncOptions = append(spec.SyncPolicy.SyncOptions, o)
	}
	return nil
}

// imageName is the image a Kustomize override is for: what comes before
// "=", or else the reference without its tag or digest.
func imageName(img string) string {
	if name, _, ok := strings.Cut(img, "="); ok {
		return name
	}
	if i := strings.Index(img, "@"); i >= 0 {
		img = img[:i]
	}
	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		img = img[:i]
	}
	return img
}

// appCreateFlags are what app create and admin app generate-spec make an
// Application from: a file, a name, labels and annotations, and the
// source, destination and sync flags.
type appCreateFlags struct {
	spec                specFlags
	file, name          string
	labels, annotations []string
	finalizer           bool
}

func (a *appCreateFlags) add(fs *pflag.FlagSet) {
	a.spec.add(fs)
	fs.StringVarP(&a.file, "file", "f", "", "read the Application from this YAML or JSON file (flags override it)")
	fs.StringArrayVarP(&a.labels, "label", "l", nil, "label KEY=VALUE (repeatable)")
	fs.StringVar(&a.name, "name", "", "name of the Application (instead of the argument)")
	fs.StringArrayVar(&a.annotations, "annotations", nil, "annotation KEY=VALUE (repeatable)")
	fs.BoolVar(&a.finalizer, "set-finalizer", false, "add the finalizer that deletes the resources with the Application")
}

// build makes the Application the flags describe.
func (a *appCreateFlags) build(fs *pflag.FlagSet, args []string) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	if a.file != "" {
		if err := cmdutil.ReadObject(a.file, app); err != nil {
			return nil, err
		}
	}
	app.Name = cmp.Or(append(args, a.name, app.Name)...)
	if app.Name == "" {
		return nil, fmt.Errorf("an application name is required")
	}
	for _, m := range []struct {
		values []string
		dst    *map[string]string
	}{{a.labels, &app.Labels}, {a.annotations, &app.Annotations}} {
		for _, l := range m.values {
			k, v, _ := strings.Cut(l, "=")
			if *m.dst == nil {
				*m.dst = map[string]string{}
			}
			(*m.dst)[k] = v
		}
	}
	if a.finalizer && !slices.Contains(app.Finalizers, v1alpha1.ResourcesFinalizerName) {
		app.Finalizers = append(app.Finalizers, v1alpha1.ResourcesFinalizerName)
	}
	if err := a.spec.apply(fs, app); err != nil {
		return nil, err
	}
	return app, nil
}

func newAppCreateCommand(f *clientFlags) *cobra.Command {
	a := &appCreateFlags{}
	var appNamespace string
	var upsert, validate bool
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an Application from flags or from a file",
		Example: "  capstan app create guestbook --repo https://github.com/argoproj/argocd-example-apps.git --path guestbook \\\n" +
			"    --dest-server https://kubernetes.default.svc --dest-namespace default\n" +
			"  capstan app create web --repo https://charts.example.com --helm-chart web --revision 1.2.0 \\\n" +
			"    --dest-namespace web --dest-server https://kubernetes.default.svc --helm-set replicaCount=2 --sync-policy automated --self-heal\n" +
			"  capstan app create -f application.yaml",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			app, err := a.build(cmd.Flags(), args)
			if err != nil {
				return err
			}
			if appNamespace != "" {
				app.Namespace = appNamespace
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.Do(cmd.Context(), "POST", apiclient.Path("/api/v1/applications").With(url.Values{"upsert": {strconv.FormatBool(upsert)}, "validate": {strconv.FormatBool(validate)}}), app, nil); err != nil {
				return fmt.Errorf("creating application %s: %w", app.Name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application '%s' created\n", app.Name)
			return nil
		},
	}
	a.add(cmd.Flags())
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace an existing Application with a different spec")
	cmd.Flags().BoolVar(&validate, "validate", true, "check the source renders and the project allows the Application before creating it")
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	return cmd
}

func newAppSetCommand(f *clientFlags) *cobra.Command {
	s := &specFlags{}
	var appNamespace string
	var validate bool
	cmd := &cobra.Command{
		Use:     "set NAME",
		Short:   "Change an Application's spec",
		Example: "  capstan app set guestbook --revision v1.2.0\n  capstan app set web --helm-set image.tag=1.28 --sync-policy automated --auto-prune",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editApp(cmd.Context(), f, args[0], url.Values{"appNamespace": {appNamespace}, "validate": {strconv.FormatBool(validate)}},
				func(app *v1alpha1.Application) error { return s.apply(cmd.Flags(), app) })
		},
	}
	s.add(cmd.Flags())
	cmd.Flags().IntVar(&s.sourcePosition, "source-position", -1, "1-based position of the source to change, for a multi-source Application")
	cmd.Flags().BoolVar(&validate, "validate", true, "check the source renders and the project allows the change first")
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	return cmd
}

func newAppAddSourceCommand(f *clientFlags) *cobra.Command {
	s := &specFlags{}
	var appNamespace string
	var validate bool
	cmd := &cobra.Command{
		Use:     "add-source APPNAME",
		Short:   "Add a source to an Application, making it multi-source",
		Example: "  capstan app add-source guestbook --repo https://github.com/example/values.git --ref values\n  capstan app add-source web --repo https://charts.example.com --helm-chart web --revision 1.2.0",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{"appNamespace": {appNamespace}, "validate": {strconv.FormatBool(validate)}}
			return editApp(cmd.Context(), f, args[0], q, func(app *v1alpha1.Application) error {
				added := &v1alpha1.Application{ObjectMeta: app.ObjectMeta}
				if err := s.apply(cmd.Flags(), added); err != nil {
					return err
				}
				if added.Spec.Source == nil {
					return fmt.Errorf("add-source adds a source; set a source hydrator with app set")
				}
				if added.Spec.Source.RepoURL == "" {
					return fmt.Errorf("--repo is required")
				}
				if app.Spec.Source != nil {
					app.Spec.Sources = v1alpha1.ApplicationSources{*app.Spec.Source}
					app.Spec.Source = nil
				}
				app.Spec.Sources = append(app.Spec.Sources, *added.Spec.Source)
				return nil
			})
		},
	}
	s.add(cmd.Flags())
	cmd.Flags().BoolVar(&validate, "validate", true, "check the new source renders and the project allows it first")
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	return cmd
}

// unsetFlags are what app unset removes from a source.
type unsetFlags struct {
	params, helmSets, values, images, replicas, pluginEnv                           []string
	valuesLiteral, ignoreMissingValueFiles, passCredentials                         bool
	namePrefix, nameSuffix, kustomizeVersion, kustomizeNamespace, ignoreMissingComp bool
	ref                                                                             bool
}

// apply removes the flagged overrides from src.
func (u *unsetFlags) apply(src *v1alpha1.ApplicationSource) {
	if h := src.Helm; h != nil {
		drop := append(slices.Clone(u.params), u.helmSets...)
		h.Parameters = slices.DeleteFunc(h.Parameters, func(p v1alpha1.HelmParameter) bool { return slices.Contains(drop, p.Name) })
		h.ValueFiles = slices.DeleteFunc(h.ValueFiles, func(v string) bool { return slices.Contains(u.values, v) })
		if u.valuesLiteral {
			h.Values, h.ValuesObject = "", nil
		}
		h.IgnoreMissingValueFiles = h.IgnoreMissingValueFiles && !u.ignoreMissingValueFiles
		h.PassCredentials = h.PassCredentials && !u.passCredentials
	}
	if k := src.Kustomize; k != nil {
		k.Images = slices.DeleteFunc(k.Images, func(i v1alpha1.KustomizeImage) bool { return slices.Contains(u.images, imageName(string(i))) })
		k.Replicas = slices.DeleteFunc(k.Replicas, func(r v1alpha1.KustomizeReplica) bool { return slices.Contains(u.replicas, r.Name) })
		for _, f := range []struct {
			unset bool
			field *string
		}{{u.namePrefix, &k.NamePrefix}, {u.nameSuffix, &k.NameSuffix}, {u.kustomizeVersion, &k.Version}, {u.kustomizeNamespace, &k.Namespace}} {
			if f.unset {
				*f.field = ""
			}
		}
		k.IgnoreMissingComponents = k.IgnoreMissingComponents && !u.ignoreMissingComp
	}
	if p := src.Plugin; p != nil {
		p.Env = slices.DeleteFunc(p.Env, func(e *v1alpha1.EnvEntry) bool { return e != nil && slices.Contains(u.pluginEnv, e.Name) })
	}
	if u.ref {
		src.Ref = ""
	}
}

func newAppUnsetCommand(f *clientFlags) *cobra.Command {
	u := &unsetFlags{}
	var appNamespace, sourceName string
	var sourcePosition int
	cmd := &cobra.Command{
		Use:   "unset NAME",
		Short: "Remove overrides from an Application's source",
		Example: "  capstan app unset web -p image.tag --values values-prod.yaml\n  capstan app unset guestbook --kustomize-image nginx --nameprefix\n" +
			"  capstan app unset multi --source-position 2 --ref",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editApp(cmd.Context(), f, qualified(args[0], appNamespace), nil, func(app *v1alpha1.Application) error {
				if len(app.Spec.Sources) == 0 {
					if app.Spec.Source == nil {
						return fmt.Errorf("application %s has no source", app.Name)
					}
					u.apply(app.Spec.Source)
					return nil
				}
				if sourceName != "" {
					i := slices.IndexFunc(app.Spec.Sources, func(src v1alpha1.ApplicationSource) bool { return src.Name == sourceName })
					if i < 0 {
						return fmt.Errorf("application %s has no source named %s", app.Name, sourceName)
					}
					sourcePosition = i + 1
				}
				if sourcePosition < 1 || sourcePosition > len(app.Spec.Sources) {
					return fmt.Errorf("application %s has %d sources: pick one with --source-position (from 1) or --source-name", app.Name, len(app.Spec.Sources))
				}
				u.apply(&app.Spec.Sources[sourcePosition-1])
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&u.params, "parameter", "p", nil, "Helm parameter NAME to remove (repeatable)")
	fl.StringArrayVar(&u.helmSets, "helm-set", nil, "Helm parameter NAME to remove (repeatable)")
	fl.StringArrayVar(&u.values, "values", nil, "Helm values file to remove (repeatable)")
	fl.BoolVar(&u.valuesLiteral, "values-literal", false, "remove the inline Helm values")
	fl.BoolVar(&u.ignoreMissingValueFiles, "ignore-missing-value-files", false, "stop ignoring missing Helm value files")
	fl.BoolVar(&u.passCredentials, "pass-credentials", false, "stop passing credentials to every Helm chart domain")
	fl.StringArrayVar(&u.images, "kustomize-image", nil, "Kustomize image override to remove, by image name (repeatable)")
	fl.StringArrayVar(&u.replicas, "kustomize-replica", nil, "Kustomize replica override to remove, by name (repeatable)")
	fl.BoolVar(&u.namePrefix, "nameprefix", false, "remove the Kustomize name prefix")
	fl.BoolVar(&u.nameSuffix, "namesuffix", false, "remove the Kustomize name suffix")
	fl.BoolVar(&u.kustomizeVersion, "kustomize-version", false, "remove the Kustomize version")
	fl.BoolVar(&u.kustomizeNamespace, "kustomize-namespace", false, "remove the Kustomize namespace")
	fl.BoolVar(&u.ignoreMissingComp, "ignore-missing-components", false, "stop ignoring missing Kustomize components")
	fl.StringArrayVar(&u.pluginEnv, "plugin-env", nil, "plugin environment variable NAME to remove (repeatable)")
	fl.BoolVar(&u.ref, "ref", false, "remove the source's ref name")
	fl.IntVar(&sourcePosition, "source-position", -1, "the source (from 1) of a multi-source Application")
	fl.StringVar(&sourceName, "source-name", "", "the source of a multi-source Application, by its name")
	fl.StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	return cmd
}

// editApp reads an Application, changes its spec and writes it back; q
// (appNamespace, validate) goes with both calls.
func editApp(ctx context.Context, f *clientFlags, name string, q url.Values, edit func(*v1alpha1.Application) error) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	app := &v1alpha1.Application{}
	if err := c.Do(ctx, "GET", appPath(name, "").With(q), nil, app); err != nil {
		return fmt.Errorf("getting application %s: %w", name, err)
	}
	if err := edit(app); err != nil {
		return err
	}
	if err := c.Do(ctx, "PUT", appPath(name, "/spec").With(q), app.Spec, nil); err != nil {
		return fmt.Errorf("updating application %s: %w", name, err)
	}
	return nil
}
