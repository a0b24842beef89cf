package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/settings"
)

// newProjSourceIntegrityCommand is proj source-integrity git policies:
// a project's signature policies for Git sources, by index.
func newProjSourceIntegrityCommand(f *clientFlags) *cobra.Command {
	policies := &cobra.Command{Use: "policies", Short: "Manage a project's signature policies for Git repositories"}
	policies.AddCommand(newIntegrityListCommand(f), newIntegrityAddCommand(f), newIntegrityDeleteCommand(f), newIntegrityUpdateCommand(f))
	git := &cobra.Command{Use: "git", Short: "Manage source integrity of Git repositories"}
	git.AddCommand(policies)
	cmd := &cobra.Command{Use: "source-integrity", Short: "Manage what a project's sources must prove: GnuPG signatures on Git commits"}
	cmd.AddCommand(git)
	return cmd
}

// gitPolicies are the project's Git policies, or Argo CD's error when it
// has none.
func gitPolicies(p *v1alpha1.AppProject) ([]v1alpha1.SourceIntegrityGitPolicy, error) {
	if p.Spec.SourceIntegrity == nil || p.Spec.SourceIntegrity.Git == nil || len(p.Spec.SourceIntegrity.Git.Policies) == 0 {
		return nil, fmt.Errorf("no source integrity git policies defined for project %q", p.Name)
	}
	return p.Spec.SourceIntegrity.Git.Policies, nil
}

// projPolicies reads the project name and its Git policies (Argo CD's
// error when it has none).
func projPolicies(ctx context.Context, c *apiclient.Client, name string) (*v1alpha1.AppProject, []v1alpha1.SourceIntegrityGitPolicy, error) {
	p, err := getProj(ctx, c, name)
	if err != nil {
		return nil, nil, err
	}
	policies, err := gitPolicies(p)
	return p, policies, err
}

// policyIndex reads a POLICY_ID: the policy's index in the list.
func policyIndex(id string, n int) (int, error) {
	i, err := strconv.Atoi(id)
	if err != nil {
		return 0, fmt.Errorf("invalid POLICY_ID '%s'", id)
	}
	if i < 0 || i >= n {
		return 0, fmt.Errorf("the POLICY_ID %d is out of range (0-%d)", i, n-1)
	}
	return i, nil
}

// gpgMode checks a --gpg-mode value.
func gpgMode(mode string) (string, error) {
	switch mode {
	case "strict", "head", "none":
		return mode, nil
	case "":
		return "", errors.New("gpg-mode must be set")
	}
	return "", errors.New("gpg-mode must be one of: strict, head, none")
}

// gpgKeyID checks a GnuPG key ID (16 hexadecimal digits, or a 40-digit
// fingerprint) and returns its short form.
func gpgKeyID(k string) (string, error) {
	hex := len(k) > 0 && strings.Trim(strings.ToUpper(k), "0123456789ABCDEF") == ""
	if !hex || (len(k) != 16 && len(k) != 40) {
		return "", fmt.Errorf("invalid GPG key ID '%s': not a valid GnuPG key ID", k)
	}
	return settings.GPGKeyID(k), nil
}

func gpgKeyIDs(keys []string) ([]string, error) {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		id, err := gpgKeyID(k)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func printGitPolicies(w io.Writer, policies []v1alpha1.SourceIntegrityGitPolicy) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tGPG-MODE\tGPG-KEYS\tREPO-URLS")
	for i, p := range policies {
		mode, keys, urls := "<none>", "<none>", "<none>"
		if p.GPG != nil {
			mode = p.GPG.Mode
			if len(p.GPG.Keys) > 0 {
				keys = strings.Join(p.GPG.Keys, ", ")
			}
		}
		if len(p.Repos) > 0 {
			var l []string
			for _, r := range p.Repos {
				l = append(l, r.URL)
			}
			urls = strings.Join(l, ", ")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i, mode, keys, urls)
	}
	return tw.Flush()
}

// warnPolicy says on stderr when a policy can never apply or never pass.
func warnPolicy(w io.Writer, p *v1alpha1.SourceIntegrityGitPolicy) {
	if len(p.Repos) == 0 {
		fmt.Fprintln(w, "Warning: Policy has no repository URLs and will never be used")
	}
	if p.GPG != nil && len(p.GPG.Keys) == 0 && p.GPG.Mode != "none" {
		fmt.Fprintln(w, "Warning: Policy has no GPG keys and will never validate any revision")
	}
}

func newIntegrityListCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "list PROJECT",
		Short:   "List a project's Git signature policies; the ID is what delete and update take",
		Example: "  capstan proj source-integrity git policies list team-a",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			_, policies, err := projPolicies(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			return printGitPolicies(cmd.OutOrStdout(), policies)
		}),
	}
}

func newIntegrityAddCommand(f *clientFlags) *cobra.Command {
	var urls, keys []string
	var mode string
	cmd := &cobra.Command{
		Use:     "add PROJECT",
		Short:   "Add a Git signature policy to a project",
		Example: "  capstan proj source-integrity git policies add team-a --repo-url 'https://github.com/team-a/*' --gpg-mode strict --gpg-key D56C4FCA57A46444",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, err := getProj(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			m, err := gpgMode(mode)
			if err != nil {
				return err
			}
			ids, err := gpgKeyIDs(keys)
			if err != nil {
				return err
			}
			policy := v1alpha1.SourceIntegrityGitPolicy{GPG: &v1alpha1.SourceIntegrityGitPolicyGPG{Mode: m, Keys: ids}}
			for _, u := range urls {
				policy.Repos = append(policy.Repos, v1alpha1.SourceIntegrityGitPolicyRepo{URL: u})
			}
			warnPolicy(cmd.ErrOrStderr(), &policy)
			if p.Spec.SourceIntegrity == nil {
				p.Spec.SourceIntegrity = &v1alpha1.SourceIntegrity{}
			}
			if p.Spec.SourceIntegrity.Git == nil {
				p.Spec.SourceIntegrity.Git = &v1alpha1.SourceIntegrityGit{}
			}
			p.Spec.SourceIntegrity.Git.Policies = append(p.Spec.SourceIntegrity.Git.Policies, policy)
			if err := putProj(cmd.Context(), c, p); err != nil {
				return err
			}
			return printGitPolicies(cmd.OutOrStdout(), p.Spec.SourceIntegrity.Git.Policies)
		}),
	}
	cmd.Flags().StringSliceVar(&urls, "repo-url", nil, "repository URL glob the policy applies to (repeatable)")
	cmd.Flags().StringVar(&mode, "gpg-mode", "", "how signatures are checked: strict (every commit), head (the synced commit) or none")
	cmd.Flags().StringSliceVar(&keys, "gpg-key", nil, "GnuPG key ID a signature may be made with (repeatable)")
	return cmd
}

func newIntegrityDeleteCommand(f *clientFlags) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "delete PROJECT POLICY_ID...",
		Short:   "Delete Git signature policies from a project",
		Example: "  capstan proj source-integrity git policies delete team-a 1 3 --yes",
		Args:    cobra.MinimumNArgs(2),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, policies, err := projPolicies(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			drop := map[int]bool{}
			for _, id := range args[1:] {
				i, err := policyIndex(id, len(policies))
				if err != nil {
					return err
				}
				drop[i] = true
			}
			if !f.confirm(cmd, yes, fmt.Sprintf("Are you sure you want to delete policies %s from project %q? [y/N] ", strings.Join(args[1:], ", "), p.Name)) {
				fmt.Fprintln(cmd.OutOrStdout(), "Aborted by user.")
				return nil
			}
			var kept []v1alpha1.SourceIntegrityGitPolicy
			for i, pol := range policies {
				if !drop[i] {
					kept = append(kept, pol)
				}
			}
			p.Spec.SourceIntegrity.Git.Policies = kept
			if len(kept) == 0 {
				p.Spec.SourceIntegrity = nil
			}
			return putProj(cmd.Context(), c, p)
		}),
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// integrityUpdate are update's flags.
type integrityUpdate struct {
	mode                      string
	urls, addURLs, deleteURLs []string
	keys, addKeys, deleteKeys []string
	yes                       bool
}

func (u *integrityUpdate) apply(policy *v1alpha1.SourceIntegrityGitPolicy) error {
	if len(u.keys) > 0 && (len(u.addKeys) > 0 || len(u.deleteKeys) > 0) {
		return errors.New("option --gpg-key, cannot be combined with --add-gpg-key or --delete-gpg-key")
	}
	if len(u.urls) > 0 && (len(u.addURLs) > 0 || len(u.deleteURLs) > 0) {
		return errors.New("option --repo-url, cannot be combined with --add-repo-url or --delete-repo-url")
	}
	if len(u.urls) > 0 {
		policy.Repos = nil
		u.addURLs = u.urls
	}
	policy.Repos = slices.DeleteFunc(policy.Repos, func(r v1alpha1.SourceIntegrityGitPolicyRepo) bool { return slices.Contains(u.deleteURLs, r.URL) })
	for _, url := range u.addURLs {
		if !slices.ContainsFunc(policy.Repos, func(r v1alpha1.SourceIntegrityGitPolicyRepo) bool { return r.URL == url }) {
			policy.Repos = append(policy.Repos, v1alpha1.SourceIntegrityGitPolicyRepo{URL: url})
		}
	}
	if policy.GPG == nil { // GnuPG is the only kind of check
		policy.GPG = &v1alpha1.SourceIntegrityGitPolicyGPG{}
	}
	if u.mode != "" {
		m, err := gpgMode(u.mode)
		if err != nil {
			return err
		}
		policy.GPG.Mode = m
	} else if policy.GPG.Mode == "" {
		return errors.New("gpg-mode must be set")
	}
	set, err := gpgKeyIDs(u.keys)
	if err != nil {
		return err
	}
	if len(set) > 0 {
		policy.GPG.Keys = set
	}
	del, err := gpgKeyIDs(u.deleteKeys)
	if err != nil {
		return err
	}
	policy.GPG.Keys = slices.DeleteFunc(policy.GPG.Keys, func(k string) bool { return slices.Contains(del, settings.GPGKeyID(k)) })
	add, err := gpgKeyIDs(u.addKeys)
	if err != nil {
		return err
	}
	for _, k := range add {
		if !slices.ContainsFunc(policy.GPG.Keys, func(have string) bool { return settings.GPGKeyID(have) == k }) {
			policy.GPG.Keys = append(policy.GPG.Keys, k)
		}
	}
	return nil
}

func newIntegrityUpdateCommand(f *clientFlags) *cobra.Command {
	u := &integrityUpdate{}
	cmd := &cobra.Command{
		Use:     "update PROJECT POLICY_ID",
		Short:   "Change a project's Git signature policy",
		Example: "  capstan proj source-integrity git policies update team-a 0 --add-repo-url 'https://github.com/team-b/*'\n  capstan proj source-integrity git policies update team-a 0 --gpg-mode strict --add-gpg-key D56C4FCA57A46444 --yes",
		Args:    cobra.ExactArgs(2),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			p, policies, err := projPolicies(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			i, err := policyIndex(args[1], len(policies))
			if err != nil {
				return err
			}
			if err := u.apply(&policies[i]); err != nil {
				return err
			}
			warnPolicy(cmd.ErrOrStderr(), &policies[i])
			if err := printGitPolicies(cmd.OutOrStdout(), policies); err != nil {
				return err
			}
			if !f.confirm(cmd, u.yes, fmt.Sprintf("Are you sure you want to update policy %d from project %q? [y/N] ", i, p.Name)) {
				fmt.Fprintln(cmd.OutOrStdout(), "Aborted by user.")
				return nil
			}
			return putProj(cmd.Context(), c, p)
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&u.mode, "gpg-mode", "", "how signatures are checked: strict, head or none")
	fs.StringSliceVar(&u.urls, "repo-url", nil, "repository URL globs, replacing the policy's")
	fs.StringSliceVar(&u.addURLs, "add-repo-url", nil, "repository URL glob to add")
	fs.StringSliceVar(&u.deleteURLs, "delete-repo-url", nil, "repository URL glob to remove")
	fs.StringSliceVar(&u.keys, "gpg-key", nil, "GnuPG key IDs, replacing the policy's")
	fs.StringSliceVar(&u.addKeys, "add-gpg-key", nil, "GnuPG key ID to add")
	fs.StringSliceVar(&u.deleteKeys, "delete-gpg-key", nil, "GnuPG key ID to remove")
	fs.BoolVarP(&u.yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
