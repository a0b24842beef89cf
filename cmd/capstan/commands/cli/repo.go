package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/settings"
)

// newRepoCommand is repo (templates false) or repocreds (true): the same
// verbs on repositories and on credential templates.
func newRepoCommand(f *clientFlags, templates bool) *cobra.Command {
	use, what, prefix := "repo", "repositories", "/api/v1/repositories"
	example := "  capstan repo add https://github.com/example/app.git --username git --password $TOKEN\n" +
		"  capstan repo add git@github.com:example/app.git --ssh-private-key-path ~/.ssh/id_ed25519\n" +
		"  capstan repo add https://charts.example.com --type helm --name example"
	if templates {
		use, what, prefix = "repocreds", "credential templates (credentials for every repository under a URL prefix)", "/api/v1/repocreds"
		example = "  capstan repocreds add https://github.com/example --username git --password $TOKEN"
	}
	cmd := &cobra.Command{Use: use, Short: "Manage " + what}

	r := &repoAddFlags{}
	var upsert bool
	add := &cobra.Command{
		Use:     "add URL",
		Short:   "Add " + map[bool]string{false: "a repository", true: "a credential template"}[templates],
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			repo, err := r.build(args[0])
			if err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			body, err := repoBody(repo, templates)
			if err != nil {
				return err
			}
			if err := c.Do(cmd.Context(), "POST", apiclient.Path(prefix).With(url.Values{"upsert": {strconv.FormatBool(upsert)}}), body, nil); err != nil {
				return fmt.Errorf("adding %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s '%s' added\n", map[bool]string{false: "Repository", true: "Repository credentials"}[templates], args[0])
			return nil
		},
	}
	r.add(add, templates)
	add.Flags().BoolVar(&upsert, "upsert", false, "replace an existing entry with different settings")

	var output, refresh string
	list := &cobra.Command{
		Use:     "list",
		Short:   "List " + what + " (credentials are never shown)",
		Example: "  capstan " + use + " list\n  capstan " + use + " list --refresh hard",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			if refresh != "" && refresh != "hard" {
				return fmt.Errorf("--refresh %q: the only value is hard", refresh)
			}
			var resp struct {
				Items []struct {
					settings.Repository
					CredsURL        string                            `json:"url"` // a credential template's URL, as Argo CD's RepoCreds names it
					ConnectionState *struct{ Status, Message string } `json:"connectionState,omitempty"`
				}
			}
			if err := c.Do(cmd.Context(), "GET", apiclient.Path(prefix).With(url.Values{"forceRefresh": {strconv.FormatBool(refresh == "hard")}}), nil, &resp); err != nil {
				return fmt.Errorf("listing %s: %w", use, err)
			}
			items := make([]settings.Repository, len(resp.Items))
			for i, r := range resp.Items {
				items[i] = r.Repository
				items[i].URL = cmp.Or(r.URL, r.CredsURL)
			}
			if output != "wide" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), items, output)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TYPE\tNAME\tREPO\tINSECURE\tOCI\tLFS\tCREDS\tSTATUS\tMESSAGE\tPROJECT")
			for i, r := range items {
				creds := "false"
				if r.Username != "" {
					creds = "true"
				}
				status, message := "", ""
				if st := resp.Items[i].ConnectionState; st != nil {
					status, message = st.Status, st.Message
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%t\t%t\t%s\t%s\t%s\t%s\n", r.Type, r.Name, r.URL, r.Insecure, r.EnableOCI, r.EnableLFS, creds, status, message, r.Project)
			}
			return tw.Flush()
		}),
	}
	list.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	if !templates {
		list.Flags().StringVar(&refresh, "refresh", "", "hard: test each repository's connection anew")
	}

	var rmProject string
	rm := &cobra.Command{
		Use:     "rm URL",
		Short:   "Remove " + map[bool]string{false: "a repository", true: "a credential template"}[templates],
		Example: "  capstan " + use + " rm https://github.com/example/app.git",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if err := c.Do(cmd.Context(), "DELETE", apiclient.PathOf(prefix+"/{url}", args[0]).With(url.Values{"appProject": {rmProject}}), nil, nil); err != nil {
				return fmt.Errorf("removing %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "'%s' removed\n", args[0])
			return nil
		}),
	}
	if !templates {
		rm.Flags().StringVar(&rmProject, "project", "", "project of the repository (when several projects have its URL)")
	}
	cmd.AddCommand(add, list, rm)
	if !templates {
		cmd.AddCommand(newRepoGetCommand(f))
	}
	return cmd
}

func newRepoGetCommand(f *clientFlags) *cobra.Command {
	var output, project, refresh string
	cmd := &cobra.Command{
		Use:     "get REPO",
		Short:   "Show a repository (its credentials are never shown)",
		Example: "  capstan repo get https://github.com/example/app.git\n  capstan repo get https://github.com/example/app.git -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			q := url.Values{"forceRefresh": {strconv.FormatBool(refresh == "hard")}, "appProject": {project}}
			var r struct {
				settings.Repository
				ConnectionState struct{ Status, Message string } `json:"connectionState"`
			}
			if err := c.Do(cmd.Context(), "GET", apiclient.PathOf("/api/v1/repositories/{url}", args[0]).With(q), nil, &r); err != nil {
				return fmt.Errorf("getting repository %s: %w", args[0], err)
			}
			switch output {
			case "url":
				fmt.Fprintln(cmd.OutOrStdout(), r.URL)
				return nil
			case "wide", "":
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "TYPE\tNAME\tREPO\tINSECURE\tOCI\tPROJECT\tSTATUS\tMESSAGE")
				fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%t\t%s\t%s\t%s\n", r.Type, r.Name, r.URL, r.Insecure, r.EnableOCI, r.Project, r.ConnectionState.Status, r.ConnectionState.Message)
				return tw.Flush()
			}
			return cmdutil.PrintObject(cmd.OutOrStdout(), r, output)
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, url, json or yaml")
	cmd.Flags().StringVar(&project, "project", "", "project of the repository")
	cmd.Flags().StringVar(&refresh, "refresh", "", "hard: check the connection anew")
	return cmd
}

// repoBody is a repository as the API takes it; a credential template
// names its URL "url", as Argo CD's RepoCreds does.
func repoBody(repo *settings.Repository, template bool) (any, error) {
	if !template {
		return repo, nil
	}
	data, err := json.Marshal(repo)
	if err != nil {
		return nil, err
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, err
	}
	body["url"] = body["repo"]
	delete(body, "repo")
	return body, nil
}

// repoAddFlags are what repo add, repocreds add and admin repo
// generate-spec make a repository from.
type repoAddFlags struct {
	repo                                                   settings.Repository
	keyPath, certPath, certKeyPath, appKeyPath, gcpKeyPath string
	ignoreHostKey                                          bool
	appID, appInstallationID, depth                        int64
}

func (r *repoAddFlags) add(cmd *cobra.Command, template bool) {
	fs, repo := cmd.Flags(), &r.repo
	fs.StringVar(&repo.Username, "username", "", "user name for HTTPS")
	fs.StringVar(&repo.Password, "password", "", "password or token for HTTPS")
	fs.StringVar(&r.keyPath, "ssh-private-key-path", "", "file with the SSH private key")
	fs.BoolVar(&repo.Insecure, "insecure-skip-server-verification", false, "skip TLS verification and SSH host key checks")
	fs.StringVar(&repo.Type, "type", "git", "git, helm or oci")
	fs.StringVar(&repo.Name, "name", "", "name (needed for Helm repositories)")
	fs.BoolVar(&repo.EnableOCI, "enable-oci", false, "the Helm repository is an OCI registry")
	fs.StringVar(&repo.Project, "project", "", "limit the repository to one project")
	fs.StringVar(&r.certPath, "tls-client-cert-path", "", "file with a TLS client certificate (PEM) for HTTPS")
	fs.StringVar(&r.certKeyPath, "tls-client-cert-key-path", "", "file with the TLS client certificate's key (PEM)")
	fs.StringVar(&repo.BearerToken, "bearer-token", "", "bearer token for HTTPS, in place of a password (Bitbucket Data Center)")
	fs.BoolVar(&repo.ForceHTTPBasicAuth, "force-http-basic-auth", false, "send basic auth without being asked, which Capstan always does")
	proxyFlag := "proxy"
	if template {
		proxyFlag = "proxy-url"
	} else {
		fs.BoolVar(&r.ignoreHostKey, "insecure-ignore-host-key", false, "skip SSH host key checks (the same as --insecure-skip-server-verification)")
		fs.StringVar(&repo.NoProxy, "no-proxy", "", "hosts reached without the proxy (comma-separated)")
		fs.Int64Var(&r.depth, "depth", 0, "fetch Git commits with only this much history (0: the whole history)")
		fs.BoolVar(&repo.WebhookManifestCacheWarmDisabled, "webhook-manifest-cache-warm-disabled", false,
			"kept for Argo CD, whose webhook copies cached manifests to a pushed revision; Capstan never does")
		fs.BoolVar(&repo.EnableLFS, "enable-lfs", false, "check out the content of Git LFS files, not their pointers")
	}
	fs.BoolVar(&repo.InsecureOCIForceHTTP, "insecure-oci-force-http", false, "reach the OCI registry over plain HTTP, without TLS (with --type oci or --enable-oci)")
	fs.StringVar(&repo.Proxy, proxyFlag, "", "HTTP(S) proxy to reach the repository through")
	fs.Int64Var(&r.appID, "github-app-id", 0, "ID of the GitHub App whose installation reaches the repository over HTTPS")
	fs.Int64Var(&r.appInstallationID, "github-app-installation-id", 0, "the GitHub App's installation ID")
	fs.StringVar(&r.appKeyPath, "github-app-private-key-path", "", "file with the GitHub App's private key (PEM)")
	fs.StringVar(&repo.EnterpriseBaseURL, "github-app-enterprise-base-url", "", "API URL of a GitHub Enterprise Server (https://ghe.example.com/api/v3)")
	fs.StringVar(&r.gcpKeyPath, "gcp-service-account-key-path", "", "file with a Google service account key (JSON), whose tokens reach Google Cloud over HTTPS")
	fs.BoolVar(&repo.UseAzureWorkloadIdentity, "use-azure-workload-identity", false, "reach Azure DevOps (or, for Helm, an Azure Container Registry) as the repo server's Azure workload identity")
	fs.StringVar(&repo.AzureServicePrincipalClientID, "azure-service-principal-client-id", "", "client ID of the Azure service principal that reaches Azure DevOps")
	fs.StringVar(&repo.AzureServicePrincipalClientSecret, "azure-service-principal-client-secret", "", "the Azure service principal's client secret")
	fs.StringVar(&repo.AzureServicePrincipalTenantID, "azure-service-principal-tenant-id", "", "the Azure service principal's tenant ID")
	fs.StringVar(&repo.AzureActiveDirectoryEndpoint, "azure-active-directory-endpoint", "", "Microsoft Entra ID endpoint of the service principal (default: https://login.microsoftonline.com)")
}

// build makes the repository at url the flags describe, reading the key
// and certificate files they name.
func (r *repoAddFlags) build(url string) (*settings.Repository, error) {
	repo := r.repo
	repo.URL = url
	repo.Insecure = repo.Insecure || r.ignoreHostKey
	for _, file := range []struct {
		path, what string
		into       *string
	}{{r.keyPath, "the SSH private key", &repo.SSHPrivateKey}, {r.certPath, "the TLS client certificate", &repo.TLSClientCertData},
		{r.certKeyPath, "the TLS client certificate's key", &repo.TLSClientCertKey}, {r.appKeyPath, "the GitHub App's private key", &repo.PrivateKey},
		{r.gcpKeyPath, "the Google service account key", &repo.GCPServiceAccountKey}} {
		if file.path == "" {
			continue
		}
		data, err := os.ReadFile(file.path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file.what, err)
		}
		*file.into = string(data)
	}
	if (repo.TLSClientCertData == "") != (repo.TLSClientCertKey == "") {
		return nil, fmt.Errorf("--tls-client-cert-path and --tls-client-cert-key-path go together")
	}
	if repo.InsecureOCIForceHTTP && repo.Type != "oci" && (repo.Type != "helm" || !repo.EnableOCI) {
		return nil, errors.New("--insecure-oci-force-http requires --type oci or --enable-oci")
	}
	if r.gcpKeyPath != "" && !strings.HasPrefix(strings.ToLower(url), "https://") {
		return nil, errors.New("--gcp-service-account-key-path is only supported for HTTPS repositories")
	}
	if r.depth < 0 {
		return nil, fmt.Errorf("--depth %d: want 0 or more", r.depth)
	}
	repo.Depth = settings.FlexInt(r.depth)
	repo.ID, repo.InstallationID = settings.FlexInt(r.appID), settings.FlexInt(r.appInstallationID)
	if app := r.appID != 0 || r.appInstallationID != 0 || repo.PrivateKey != ""; app && (r.appID == 0 || r.appInstallationID == 0 || repo.PrivateKey == "") {
		return nil, fmt.Errorf("--github-app-id, --github-app-installation-id and --github-app-private-key-path go together")
	}
	return &repo, nil
}
