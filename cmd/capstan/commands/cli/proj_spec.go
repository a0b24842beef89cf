package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// projSpecFlags are the AppProject fields proj create and proj set take
// as flags, with Argo CD's names and formats.
type projSpecFlags struct {
	description                     string
	sources, dests, serviceAccounts []string
	signatureKeys, sourceNamespaces []string
	allowCluster, denyCluster       []string
	allowNamespaced, denyNamespaced []string
	orphanedResources, orphanedWarn bool
}

func (p *projSpecFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&p.description, "description", "", "description")
	fs.StringArrayVarP(&p.sources, "src", "s", nil, "allowed source repository URL or glob (repeatable)")
	fs.StringArrayVarP(&p.dests, "dest", "d", nil, "allowed destination SERVER,NAMESPACE (repeatable)")
	fs.StringArrayVar(&p.serviceAccounts, "dest-service-accounts", nil, "service account syncs impersonate: SERVER,NAMESPACE,SERVICE_ACCOUNT (repeatable)")
	fs.StringSliceVar(&p.signatureKeys, "signature-keys", nil, "GnuPG key IDs commits must be signed with")
	fs.StringSliceVar(&p.sourceNamespaces, "source-namespaces", nil, "namespaces Applications of the project may live in")
	fs.StringArrayVar(&p.allowCluster, "allow-cluster-resource", nil, "allowed cluster-scoped kind, as GROUP/KIND (repeatable)")
	fs.StringArrayVar(&p.denyCluster, "deny-cluster-resource", nil, "denied cluster-scoped kind, as GROUP/KIND (repeatable)")
	fs.StringArrayVar(&p.allowNamespaced, "allow-namespaced-resource", nil, "allowed namespaced kind, as GROUP/KIND (repeatable)")
	fs.StringArrayVar(&p.denyNamespaced, "deny-namespaced-resource", nil, "denied namespaced kind, as GROUP/KIND (repeatable)")
	fs.BoolVar(&p.orphanedResources, "orphaned-resources", false, "report resources of the destination namespaces no Application manages")
	fs.BoolVar(&p.orphanedWarn, "orphaned-resources-warn", false, "also warn on the Applications when there are orphaned resources")
}

// groupKinds reads GROUP/KIND (or KIND, of the core group) values.
func groupKinds(values []string) []metav1.GroupKind {
	var out []metav1.GroupKind
	for _, v := range values {
		group, kind, ok := strings.Cut(v, "/")
		if !ok {
			group, kind = "", v
		}
		out = append(out, metav1.GroupKind{Group: group, Kind: kind})
	}
	return out
}

func clusterItems(values []string) []v1alpha1.ClusterResourceRestrictionItem {
	var out []v1alpha1.ClusterResourceRestrictionItem
	for _, gk := range groupKinds(values) {
		out = append(out, v1alpha1.ClusterResourceRestrictionItem{Group: gk.Group, Kind: gk.Kind})
	}
	return out
}

// apply sets the fields whose flags were given on spec, replacing what
// it had, as Argo CD's proj set does.
func (p *projSpecFlags) apply(fs *pflag.FlagSet, spec *v1alpha1.AppProjectSpec) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "description":
			spec.Description = p.description
		case "src":
			spec.SourceRepos = p.sources
		case "dest":
			spec.Destinations = nil
			for _, d := range p.dests {
				server, ns, ok := strings.Cut(d, ",")
				if !ok {
					err = fmt.Errorf("destination %q is not SERVER,NAMESPACE", d)
				}
				spec.Destinations = append(spec.Destinations, v1alpha1.ApplicationDestination{Server: server, Namespace: ns})
			}
		case "dest-service-accounts":
			spec.DestinationServiceAccounts = nil
			for _, d := range p.serviceAccounts {
				parts := strings.Split(d, ",")
				if len(parts) != 3 {
					err = fmt.Errorf("destination service account %q is not SERVER,NAMESPACE,SERVICE_ACCOUNT", d)
					continue
				}
				spec.DestinationServiceAccounts = append(spec.DestinationServiceAccounts,
					v1alpha1.ApplicationDestinationServiceAccount{Server: parts[0], Namespace: parts[1], DefaultServiceAccount: parts[2]})
			}
		case "signature-keys":
			spec.SignatureKeys = nil
			for _, k := range p.signatureKeys {
				spec.SignatureKeys = append(spec.SignatureKeys, v1alpha1.SignatureKey{KeyID: k})
			}
		case "source-namespaces":
			spec.SourceNamespaces = p.sourceNamespaces
		case "allow-cluster-resource":
			spec.ClusterResourceWhitelist = clusterItems(p.allowCluster)
		case "deny-cluster-resource":
			spec.ClusterResourceBlacklist = clusterItems(p.denyCluster)
		case "allow-namespaced-resource":
			spec.NamespaceResourceWhitelist = groupKinds(p.allowNamespaced)
		case "deny-namespaced-resource":
			spec.NamespaceResourceBlacklist = groupKinds(p.denyNamespaced)
		}
	})
	if fs.Changed("orphaned-resources") || fs.Changed("orphaned-resources-warn") {
		spec.OrphanedResources = nil
		if p.orphanedResources || fs.Changed("orphaned-resources-warn") {
			spec.OrphanedResources = &v1alpha1.OrphanedResourcesMonitorSettings{}
			if fs.Changed("orphaned-resources-warn") {
				spec.OrphanedResources.Warn = &p.orphanedWarn
			}
		}
	}
	return err
}

func newProjSetCommand(f *clientFlags) *cobra.Command {
	p := &projSpecFlags{}
	cmd := newProjEditCommand(f, "set PROJECT", "Set a project's fields (each flag given replaces that field)",
		"  capstan proj set team-a --description \"Team A\" --src https://github.com/team-a/*\n  capstan proj set team-a --orphaned-resources --orphaned-resources-warn", 1, nil)
	cmd.RunE = f.withClient(editProject(func(proj *v1alpha1.AppProject, _ []string) error {
		if cmd.Flags().NFlag() == 0 {
			return fmt.Errorf("set at least one field")
		}
		return p.apply(cmd.Flags(), &proj.Spec)
	}))
	p.add(cmd.Flags())
	return cmd
}

// listEdit returns a proj edit function that adds item to (or, with
// remove, takes it off) the list field picks, refusing a second add and
// the removal of what is not there, with Argo CD's messages.
func listEdit[T any](pick func(*v1alpha1.AppProjectSpec) *[]T, item func(args []string) T, equal func(a, b T) bool, what string, remove bool) func(*v1alpha1.AppProject, []string) error {
	return func(p *v1alpha1.AppProject, args []string) error {
		list, it := pick(&p.Spec), item(args)
		i := slices.IndexFunc(*list, func(x T) bool { return equal(x, it) })
		switch {
		case !remove && i >= 0:
			return fmt.Errorf("%s already defined in project %s", what, p.Name)
		case remove && i < 0:
			return fmt.Errorf("%s does not exist in project %s", what, p.Name)
		case remove:
			*list = slices.Delete(*list, i, i+1)
		default:
			*list = append(*list, it)
		}
		return nil
	}
}

func same[T comparable](a, b T) bool { return a == b }

// newProjListCommands are the add-/remove- commands on a project's lists.
func newProjListCommands(f *clientFlags) []*cobra.Command {
	var orphanName, saNamespace string
	orphanKey := func(args []string) v1alpha1.OrphanedResourceKey {
		return v1alpha1.OrphanedResourceKey{Group: args[1], Kind: args[2], Name: orphanName}
	}
	orphans := func(s *v1alpha1.AppProjectSpec) *[]v1alpha1.OrphanedResourceKey {
		if s.OrphanedResources == nil {
			s.OrphanedResources = &v1alpha1.OrphanedResourcesMonitorSettings{}
		}
		return &s.OrphanedResources.Ignore
	}
	serviceAccount := func(args []string) v1alpha1.ApplicationDestinationServiceAccount {
		sa := args[3]
		if saNamespace != "" {
			sa = saNamespace + ":" + sa
		}
		return v1alpha1.ApplicationDestinationServiceAccount{Server: args[1], Namespace: args[2], DefaultServiceAccount: sa}
	}
	serviceAccounts := func(s *v1alpha1.AppProjectSpec) *[]v1alpha1.ApplicationDestinationServiceAccount {
		return &s.DestinationServiceAccounts
	}
	sameSA := func(a, b v1alpha1.ApplicationDestinationServiceAccount) bool {
		return a.Server == b.Server && a.Namespace == b.Namespace && (a.DefaultServiceAccount == b.DefaultServiceAccount || strings.HasSuffix(a.DefaultServiceAccount, ":"+b.DefaultServiceAccount))
	}
	sources := func(s *v1alpha1.AppProjectSpec) *[]string { return &s.SourceRepos }
	sourceNamespaces := func(s *v1alpha1.AppProjectSpec) *[]string { return &s.SourceNamespaces }
	keys := func(s *v1alpha1.AppProjectSpec) *[]v1alpha1.SignatureKey { return &s.SignatureKeys }
	arg := func(i int) func([]string) string { return func(args []string) string { return args[i] } }
	key := func(args []string) v1alpha1.SignatureKey { return v1alpha1.SignatureKey{KeyID: args[1]} }
	dest := func(args []string) v1alpha1.ApplicationDestination {
		return v1alpha1.ApplicationDestination{Server: args[1], Namespace: args[2]}
	}
	dests := func(s *v1alpha1.AppProjectSpec) *[]v1alpha1.ApplicationDestination { return &s.Destinations }

	addOrphan := newProjEditCommand(f, "add-orphaned-ignore PROJECT GROUP KIND", "Ignore a kind (and name) in the orphaned resources report",
		"  capstan proj add-orphaned-ignore team-a apps Deployment --name legacy-*", 3, listEdit(orphans, orphanKey, same, "orphaned ignore entry", false))
	addOrphan.Flags().StringVar(&orphanName, "name", "", "resource name or glob")
	removeOrphan := newProjEditCommand(f, "remove-orphaned-ignore PROJECT GROUP KIND", "Stop ignoring a kind in the orphaned resources report",
		"  capstan proj remove-orphaned-ignore team-a apps Deployment --name legacy-*", 3, listEdit(orphans, orphanKey, same, "orphaned ignore entry", true))
	removeOrphan.Flags().StringVar(&orphanName, "name", "", "resource name or glob")
	addSA := newProjEditCommand(f, "add-destination-service-account PROJECT SERVER NAMESPACE SERVICE_ACCOUNT", "Impersonate a service account when syncing to a destination",
		"  capstan proj add-destination-service-account team-a https://kubernetes.default.svc team-a deployer", 4,
		listEdit(serviceAccounts, serviceAccount, sameSA, "destination service account", false))
	addSA.Flags().StringVar(&saNamespace, "service-account-namespace", "", "namespace of the service account (default: the destination namespace)")
	return []*cobra.Command{
		addOrphan, removeOrphan, addSA,
		newProjEditCommand(f, "remove-destination-service-account PROJECT SERVER NAMESPACE SERVICE_ACCOUNT", "Stop impersonating a service account for a destination",
			"  capstan proj remove-destination-service-account team-a https://kubernetes.default.svc team-a deployer", 4,
			listEdit(serviceAccounts, serviceAccount, sameSA, "destination service account", true)),
		newProjEditCommand(f, "remove-source PROJECT URL", "Stop allowing a source repository", "  capstan proj remove-source team-a https://github.com/team-a/*", 2,
			listEdit(sources, arg(1), same, "source repository", true)),
		newProjEditCommand(f, "remove-destination PROJECT SERVER NAMESPACE", "Stop allowing a destination", "  capstan proj remove-destination team-a https://kubernetes.default.svc team-a", 3,
			listEdit(dests, dest, same, "destination", true)),
		newProjEditCommand(f, "add-source-namespace PROJECT NAMESPACE", "Allow Applications of the project in a namespace", "  capstan proj add-source-namespace team-a team-a-apps", 2,
			listEdit(sourceNamespaces, arg(1), same, "source namespace", false)),
		newProjEditCommand(f, "remove-source-namespace PROJECT NAMESPACE", "Stop allowing Applications of the project in a namespace", "  capstan proj remove-source-namespace team-a team-a-apps", 2,
			listEdit(sourceNamespaces, arg(1), same, "source namespace", true)),
		newProjEditCommand(f, "add-signature-key PROJECT KEY-ID", "Require commits signed by a GnuPG key", "  capstan proj add-signature-key team-a 4AEE18F83AFDEB23", 2,
			listEdit(keys, key, same, "signature key", false)),
		newProjEditCommand(f, "remove-signature-key PROJECT KEY-ID", "Stop accepting commits signed by a GnuPG key", "  capstan proj remove-signature-key team-a 4AEE18F83AFDEB23", 2,
			listEdit(keys, key, same, "signature key", true)),
	}
}

// newProjResourceCommands are allow-/deny- commands on a project's kinds.
// With --list allow they change the allow list, with --list deny the deny
// list: allowing takes a kind off the deny list, denying off the allow list.
func newProjResourceCommands(f *clientFlags) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range []struct {
		use     string
		cluster bool
		allow   bool
	}{{"allow-cluster-resource", true, true}, {"deny-cluster-resource", true, false}, {"allow-namespace-resource", false, true}, {"deny-namespace-resource", false, false}} {
		var list string
		cmd := newProjEditCommand(f, c.use+" PROJECT GROUP KIND", strings.ToUpper(c.use[:1])+strings.ReplaceAll(c.use[1:], "-", " ")+" (\"\" is the core group)",
			"  capstan proj "+c.use+" team-a \"\" Namespace\n  capstan proj "+c.use+" team-a rbac.authorization.k8s.io ClusterRole --list deny", 3, nil)
		cmd.RunE = f.withClient(editProject(func(p *v1alpha1.AppProject, args []string) error {
			if list != "allow" && list != "deny" {
				return fmt.Errorf("--list must be allow or deny, not %q", list)
			}
			gk := metav1.GroupKind{Group: args[1], Kind: args[2]}
			add := (list == "allow") == c.allow
			if c.cluster {
				l := &p.Spec.ClusterResourceWhitelist
				if list == "deny" {
					l = &p.Spec.ClusterResourceBlacklist
				}
				*l = toggle(*l, v1alpha1.ClusterResourceRestrictionItem{Group: gk.Group, Kind: gk.Kind}, add)
				return nil
			}
			l := &p.Spec.NamespaceResourceWhitelist
			if list == "deny" {
				l = &p.Spec.NamespaceResourceBlacklist
			}
			*l = toggle(*l, gk, add)
			return nil
		}))
		cmd.Flags().StringVarP(&list, "list", "l", "allow", "the list to change: allow or deny")
		out = append(out, cmd)
	}
	return out
}

// toggle adds item to list (once) or removes it.
func toggle[T comparable](list []T, item T, add bool) []T {
	i := slices.Index(list, item)
	switch {
	case add && i < 0:
		return append(list, item)
	case !add && i >= 0:
		return slices.Delete(list, i, i+1)
	}
	return list
}

// windowFlags are the window fields proj windows add and update take.
type windowFlags struct {
	v1alpha1.SyncWindow
}

func (w *windowFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&w.Schedule, "schedule", "", "when the window opens, as a cron schedule such as \"0 22 * * *\"")
	cmd.Flags().StringVar(&w.Duration, "duration", "", "how long the window stays open, such as 1h")
	cmd.Flags().StringSliceVar(&w.Applications, "applications", nil, "Applications (globs) the window applies to")
	cmd.Flags().StringSliceVar(&w.Namespaces, "namespaces", nil, "destination namespaces (globs) the window applies to")
	cmd.Flags().StringSliceVar(&w.Clusters, "clusters", nil, "destination clusters (globs) the window applies to")
	cmd.Flags().StringVar(&w.TimeZone, "time-zone", "UTC", "the schedule's time zone")
	cmd.Flags().StringVar(&w.Description, "description", "", "description")
}
