package component

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/creds"
	"github.com/capstan-cd/capstan/internal/imageupdater/registry"
	"github.com/capstan-cd/capstan/internal/imageupdater/tags"
	"github.com/capstan-cd/capstan/internal/imageupdater/updater"
	"github.com/capstan-cd/capstan/internal/kube"
)

func newImageUpdaterCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "image-updater", Short: "Keep Applications' images current (Argo CD Image Updater's annotations)"}
	cmd.AddCommand(newImageUpdaterTestCommand(), newImageUpdaterRunCommand(), newImageUpdaterTemplateCommand())
	return cmd
}

func newImageUpdaterTestCommand() *cobra.Command {
	var strategy, constraint, allow, credentials, registriesConf string
	var ignore, platforms []string
	cmd := &cobra.Command{
		Use:   "test IMAGE",
		Short: "Show the tags the updater would consider for an image, and the one it would pick",
		Example: "  capstan image-updater test nginx --semver-constraint 1.27.x\n" +
			"  capstan image-updater test asia.gcr.io/project/app --update-strategy newest-build \\\n" +
			"    --allow-tags 'regexp:^[0-9a-f]{5,40}$' --ignore-tags latest --credentials env:GCR_CREDS\n" +
			"  capstan image-updater test ghcr.io/org/app --platforms linux/arm64 --registries-conf-path registries.conf",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, deprecated, err := tags.ParseStrategy(strategy)
			if err != nil {
				return err
			}
			if deprecated {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: update strategy %q is deprecated, use %q\n", strategy, st)
			}
			var regs []config.Registry
			if registriesConf != "" {
				data, err := os.ReadFile(registriesConf)
				if err != nil {
					return err
				}
				if regs, err = config.ParseRegistries(string(data)); err != nil {
					return err
				}
			}
			reg, image := config.RegistryFor(regs, args[0])
			if credentials == "" {
				credentials = reg.Credentials
			}
			resolver := &creds.Resolver{}
			if strings.HasPrefix(credentials, "pullsecret:") || strings.HasPrefix(credentials, "secret:") {
				cfg, err := ctrlconfig.GetConfig()
				if err != nil {
					return fmt.Errorf("credentials %s need a cluster: %w", credentials, err)
				}
				if resolver.Client, err = kube.NewClient(cfg); err != nil {
					return err
				}
			}
			host := strings.SplitN(image, "/", 2)[0]
			cred, err := resolver.Resolve(cmd.Context(), creds.Admin(credentials), host, 0)
			if err != nil {
				return err
			}
			client := registry.New(updater.RegistryOptions(func() []config.Registry { return regs }))
			names, err := client.Tags(cmd.Context(), image, cred)
			if err != nil {
				return err
			}
			sort.Strings(names)
			filter := tags.Filter{Allow: allow, Ignore: ignore}
			if err := filter.Compile(); err != nil {
				return err
			}
			var list []tags.Tag
			for _, n := range names {
				t := tags.Tag{Name: n}
				// Build dates and digests cost a request per tag: only the
				// strategies that need them ask, and only for tags that pass.
				if (st == tags.NewestBuild && filter.Allows(n)) || (st == tags.Digest && n == constraint) {
					m, err := client.Metadata(cmd.Context(), image, n, platforms, cred, st == tags.Digest)
					if err != nil {
						return err
					}
					t.Created, t.Digest = m.Created, m.Digest
				}
				list = append(list, t)
			}
			res, err := tags.Select(list, tags.Options{Strategy: st, Constraint: constraint, Filter: filter})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "image %s (registry %s), strategy %s, %d tags listed\n", image, reg.Name, st, len(names))
			fmt.Fprintf(out, "considered, best last: %s\n", strings.Join(res.Considered, " "))
			fmt.Fprintf(out, "left out by the filters or the strategy: %d\n", res.Skipped)
			if res.Tag == nil {
				return fmt.Errorf("no tag to update to: %s", res.Reason)
			}
			fmt.Fprintf(out, "would update to %s:%s (%s)\n", image, res.Tag.Name, res.Reason)
			return nil
		},
	}
	cmd.Flags().StringVar(&strategy, "update-strategy", "semver", "semver, newest-build, alphabetical or digest")
	cmd.Flags().StringVar(&constraint, "semver-constraint", "", "semver constraint (semver), or the tag to follow (digest)")
	cmd.Flags().StringVar(&allow, "allow-tags", "", "only tags matching regexp:<expression> (or any)")
	cmd.Flags().StringSliceVar(&ignore, "ignore-tags", nil, "tags to leave out, as globs")
	cmd.Flags().StringSliceVar(&platforms, "platforms", nil, "os/arch[/variant] a multi-arch image must offer")
	cmd.Flags().StringVar(&credentials, "credentials", "", "pullsecret:ns/name, secret:ns/name#field, env:VAR or ext:/path (default: the registry's in registries.conf)")
	cmd.Flags().StringVar(&registriesConf, "registries-conf-path", "", "a registries.conf file")
	return cmd
}
