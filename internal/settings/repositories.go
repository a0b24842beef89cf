package settings

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cloudauth"
	"github.com/capstan-cd/capstan/internal/githubapp"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// ConfigMaps holding repository TLS certificates and SSH known hosts.
const (
	TLSCertsConfigMap      = "argocd-tls-certs-cm"
	SSHKnownHostsConfigMap = "argocd-ssh-known-hosts-cm"
	sshKnownHostsKey       = "ssh_known_hosts"
	repositorySecretURLKey = "url"
)

// Repository is one repository Secret (or credential template) as Argo CD
// stores it.
type Repository struct {
	// SecretName is the Secret this came from.
	SecretName string `json:"-"`
	// Template is true for a repo-creds credential template.
	Template bool `json:"-"`
	// Write is true for push credentials (a repository-write Secret or a
	// repo-write-creds template), which only the source hydrator uses.
	Write bool `json:"-"`

	// URL is the repository URL, or a credential template's URL prefix.
	URL           string `json:"repo"`
	Type          string `json:"type,omitempty"` // git (default) or helm
	Name          string `json:"name,omitempty"`
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	SSHPrivateKey string `json:"sshPrivateKey,omitempty"`
	Insecure      bool   `json:"insecure,omitempty"`
	EnableOCI     bool   `json:"enableOCI,omitempty"`
	Project       string `json:"project,omitempty"`
	// TLSClientCertData and TLSClientCertKey are a PEM client certificate
	// and its key, for HTTPS servers that ask for one.
	TLSClientCertData string `json:"tlsClientCertData,omitempty"`
	TLSClientCertKey  string `json:"tlsClientCertKey,omitempty"`
	// BearerToken authenticates over HTTPS in place of a password.
	BearerToken string `json:"bearerToken,omitempty"`
	// Proxy is the HTTP(S) proxy to reach the repository through; NoProxy
	// lists the hosts reached directly.
	Proxy   string `json:"proxy,omitempty"`
	NoProxy string `json:"noProxy,omitempty"`
	// GitHubApp authenticates over HTTPS as a GitHub App's installation.
	GitHubApp
	// ForceHTTPBasicAuth sends basic auth without waiting to be asked,
	// which Capstan always does.
	ForceHTTPBasicAuth bool `json:"forceHttpBasicAuth,omitempty"`
	// EnableLFS puts the content of Git LFS files in checkouts in place of
	// their pointers (Git repositories only).
	EnableLFS bool `json:"enableLfs,omitempty"`
	// InsecureOCIForceHTTP reaches an OCI registry over plain HTTP, with
	// no TLS at all (OCI repositories only).
	InsecureOCIForceHTTP bool `json:"insecureOCIForceHttp,omitempty"`
	// Depth, above 0, fetches Git commits shallowly, with that much history.
	// Default 0: the whole history.
	Depth FlexInt `json:"depth,omitempty"`
	// WebhookManifestCacheWarmDisabled is kept for Argo CD, whose webhook
	// copies cached manifests to a pushed revision that leaves an
	// Application's paths alone. Capstan never does, so it changes nothing.
	WebhookManifestCacheWarmDisabled bool `json:"webhookManifestCacheWarmDisabled,omitempty"`
	// CloudCreds buy short-lived tokens from Google's or Azure's identity
	// service.
	CloudCreds
}

// CloudCreds are credentials a cloud's identity service exchanges for a
// short-lived token, as Argo CD's repository Secrets hold them.
type CloudCreds struct {
	// GCPServiceAccountKey is a Google service account key (JSON): Git
	// sends the account's e-mail and an access token it buys.
	GCPServiceAccountKey string `json:"gcpServiceAccountKey,omitempty"`
	// UseAzureWorkloadIdentity buys an Entra ID token with the repo
	// server's own Azure identity (Git: for Azure DevOps; Helm: exchanged
	// for the Azure Container Registry's refresh token).
	UseAzureWorkloadIdentity bool `json:"useAzureWorkloadIdentity,omitempty"`
	// The Azure service principal whose client secret buys an Entra ID
	// token for Azure DevOps; the endpoint defaults to Azure's public
	// cloud, https://login.microsoftonline.com.
	AzureServicePrincipalClientID     string `json:"azureServicePrincipalClientId,omitempty"`
	AzureServicePrincipalClientSecret string `json:"azureServicePrincipalClientSecret,omitempty"`
	AzureServicePrincipalTenantID     string `json:"azureServicePrincipalTenantId,omitempty"`
	AzureActiveDirectoryEndpoint      string `json:"azureActiveDirectoryEndpoint,omitempty"`
}

// Cloud is the credentials as cloudauth buys tokens with them.
func (c CloudCreds) Cloud() cloudauth.Credentials {
	return cloudauth.Credentials{GoogleKey: c.GCPServiceAccountKey, AzureWorkloadIdentity: c.UseAzureWorkloadIdentity,
		ServicePrincipal: cloudauth.ServicePrincipal{TenantID: c.AzureServicePrincipalTenantID, ClientID: c.AzureServicePrincipalClientID,
			ClientSecret: c.AzureServicePrincipalClientSecret, Endpoint: c.AzureActiveDirectoryEndpoint}}
}

// GitHubApp are a GitHub App's credentials, as Argo CD's repository
// Secrets hold them: git over HTTPS authenticates with a token of the
// app's installation.
type GitHubApp struct {
	ID                FlexInt `json:"githubAppID,omitempty"`
	InstallationID    FlexInt `json:"githubAppInstallationID,omitempty"`
	PrivateKey        string  `json:"githubAppPrivateKey,omitempty"`
	EnterpriseBaseURL string  `json:"githubAppEnterpriseBaseUrl,omitempty"`
}

// app is the credentials for githubapp, nil without a private key.
func (g GitHubApp) app() *githubapp.App {
	if g.PrivateKey == "" {
		return nil
	}
	return &githubapp.App{ID: int64(g.ID), InstallationID: int64(g.InstallationID), PrivateKey: []byte(g.PrivateKey), EnterpriseBaseURL: g.EnterpriseBaseURL}
}

// FlexInt is an integer in JSON as a number or a string (Argo CD's API
// sends 64-bit integers as strings).
type FlexInt int64

// UnmarshalJSON implements json.Unmarshaler.
func (f *FlexInt) UnmarshalJSON(data []byte) error {
	text := strings.Trim(string(data), `"`)
	if text == "" || text == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return fmt.Errorf("%s is not an integer", data)
	}
	*f = FlexInt(n)
	return nil
}

// HasCredentials reports whether the Secret carries any credential.
func (r *Repository) HasCredentials() bool {
	return r.Username != "" || r.Password != "" || r.SSHPrivateKey != "" || r.BearerToken != "" || r.TLSClientCertKey != "" ||
		r.GitHubApp.PrivateKey != "" || r.Cloud().Any()
}

// Resolve returns the credentials git (or Helm) is given, as Creds. When
// the repository has no user, password, token or SSH key of its own, a
// token is bought, in Argo CD's order: a GitHub App's installation token
// (user "x-access-token"), a Google service account's access token (user:
// the account's e-mail), an Entra ID token of the repo server's Azure
// workload identity, then of an Azure service principal (sent as a Bearer
// token; for a Helm repository, workload identity's token is exchanged
// for the Azure Container Registry's). The clone is kept by who the
// credentials are, not by the token, which is renewed hourly.
func (r *Repository) Resolve(ctx context.Context) (git.Creds, error) {
	creds := r.Creds()
	if creds.Username != "" || creds.Password != "" || creds.BearerToken != "" || creds.SSHPrivateKey != "" {
		return creds, nil
	}
	if app := r.GitHubApp.app(); app != nil {
		token, err := githubapp.Token(ctx, *app)
		if err != nil {
			return git.Creds{}, fmt.Errorf("repository %s: %w", git.RedactURL(r.URL), err)
		}
		creds.Username, creds.Password = "x-access-token", token
		creds.Identity = fmt.Sprintf("github-app/%d/%d", app.ID, app.InstallationID)
		return creds, nil
	}
	bought, err := cloudauth.Default.Buy(ctx, r.Cloud(), r.URL, r.Type == "helm")
	if err != nil {
		return git.Creds{}, fmt.Errorf("repository %s: %w", git.RedactURL(r.URL), err)
	}
	creds.Username, creds.Password, creds.BearerToken, creds.Identity = bought.Username, bought.Password, bought.BearerToken, bought.Identity
	return creds, nil
}

// Creds are the credentials and options git is given for the repository.
func (r *Repository) Creds() git.Creds {
	return git.Creds{Username: r.Username, Password: r.Password, SSHPrivateKey: r.SSHPrivateKey, Insecure: r.Insecure,
		TLSClientCert: r.TLSClientCertData, TLSClientKey: r.TLSClientCertKey, BearerToken: r.BearerToken, Proxy: r.Proxy, NoProxy: r.NoProxy,
		PlainHTTP: r.InsecureOCIForceHTTP, Depth: int(r.Depth), LFS: r.EnableLFS}
}

func repositoryFromSecret(s *corev1.Secret) (*Repository, error) {
	str := func(k string) string { return strings.TrimSpace(string(s.Data[k])) }
	r := &Repository{
		SecretName:        s.Name,
		Template:          isTemplate(s.Labels[v1alpha1.LabelSecretType]),
		Write:             isWrite(s.Labels[v1alpha1.LabelSecretType]),
		URL:               str(repositorySecretURLKey),
		Type:              str("type"),
		Name:              str("name"),
		Username:          str("username"),
		Password:          string(s.Data["password"]),
		SSHPrivateKey:     string(s.Data["sshPrivateKey"]),
		Project:           str("project"),
		TLSClientCertData: string(s.Data["tlsClientCertData"]),
		TLSClientCertKey:  string(s.Data["tlsClientCertKey"]),
		BearerToken:       str("bearerToken"),
		Proxy:             str("proxy"),
		NoProxy:           str("noProxy"),
		GitHubApp:         GitHubApp{PrivateKey: string(s.Data["githubAppPrivateKey"]), EnterpriseBaseURL: str("githubAppEnterpriseBaseUrl")},
		CloudCreds: CloudCreds{GCPServiceAccountKey: string(s.Data["gcpServiceAccountKey"]), AzureServicePrincipalClientID: str("azureServicePrincipalClientId"),
			AzureServicePrincipalClientSecret: string(s.Data["azureServicePrincipalClientSecret"]), AzureServicePrincipalTenantID: str("azureServicePrincipalTenantId"),
			AzureActiveDirectoryEndpoint: str("azureActiveDirectoryEndpoint")},
	}
	for key, dst := range map[string]*FlexInt{"githubAppID": &r.GitHubApp.ID, "githubAppInstallationID": &r.GitHubApp.InstallationID, "depth": &r.Depth} {
		if v := str(key); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("repository %s: %s is %q, want a number", secretRef(s), key, v)
			}
			*dst = FlexInt(n)
		}
	}
	for key, dst := range map[string]*bool{"insecure": &r.Insecure, "enableOCI": &r.EnableOCI, "forceHttpBasicAuth": &r.ForceHTTPBasicAuth,
		"insecureOCIForceHttp": &r.InsecureOCIForceHTTP, "webhookManifestCacheWarmDisabled": &r.WebhookManifestCacheWarmDisabled, "enableLfs": &r.EnableLFS,
		"useAzureWorkloadIdentity": &r.UseAzureWorkloadIdentity} {
		if v := str(key); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("repository %s: %s is %q, want true or false", secretRef(s), key, v)
			}
			*dst = b
		}
	}
	if r.URL == "" {
		return nil, fmt.Errorf("repository %s: no url", secretRef(s))
	}
	if r.Depth < 0 {
		return nil, fmt.Errorf("repository %s: depth is %d, want 0 or more", secretRef(s), r.Depth)
	}
	if r.Type == "" {
		r.Type = "git"
	}
	return r, nil
}

// secretRef names a Secret as Kind/namespace/name.
// isTemplate reports whether a Secret type is a credential template.
func isTemplate(secretType string) bool {
	return secretType == v1alpha1.SecretTypeRepoCredentials || secretType == v1alpha1.SecretTypeRepoWriteCredentials
}

// isWrite reports whether a Secret type holds push credentials.
func isWrite(secretType string) bool {
	return secretType == v1alpha1.SecretTypeRepositoryWrite || secretType == v1alpha1.SecretTypeRepoWriteCredentials
}

// RepoSecretType is the secret-type label of repositories (or templates,
// or, with write, push credentials).
func RepoSecretType(template, write bool) string {
	switch {
	case template && write:
		return v1alpha1.SecretTypeRepoWriteCredentials
	case template:
		return v1alpha1.SecretTypeRepoCredentials
	case write:
		return v1alpha1.SecretTypeRepositoryWrite
	}
	return v1alpha1.SecretTypeRepository
}

func secretRef(s *corev1.Secret) string { return "Secret/" + s.Namespace + "/" + s.Name }

// RepoCredentials finds credentials for repository URLs in the Secrets of
// one namespace, the way Argo CD does: a repository Secret for exactly that
// URL, else (or when that Secret has no credentials) the credential template
// with the longest URL prefix. Secrets scoped to a project serve only that
// project's Applications, and are preferred there over unscoped ones; a
// caller of no project gets only unscoped ones.
type RepoCredentials struct {
	// Reader reads Secrets and ConfigMaps, usually from an informer cache.
	Reader client.Reader
	// Namespace is the control namespace, by default argocd.
	Namespace string
	// Write looks up push credentials instead: repository-write Secrets
	// and repo-write-creds templates, as Argo CD's source hydrator does.
	Write bool
}

// ForRepo returns the credentials and TLS options for url, as project's
// Applications reach it.
func (r *RepoCredentials) ForRepo(ctx context.Context, repoURL, project string) (git.Creds, error) {
	repo, err := r.Lookup(ctx, repoURL, project)
	if err != nil {
		return git.Creds{}, err
	}
	creds := git.Creds{}
	if repo != nil {
		if creds, err = repo.Resolve(ctx); err != nil {
			return git.Creds{}, err
		}
	}
	if err := r.addTrust(ctx, repoURL, &creds); err != nil {
		return git.Creds{}, err
	}
	return creds, nil
}

// Lookup returns the Repository whose credentials apply to url for
// project: the repository Secret, or the best credential template, or nil.
func (r *RepoCredentials) Lookup(ctx context.Context, repoURL, project string) (*Repository, error) {
	var list corev1.SecretList
	if err := r.Reader.List(ctx, &list, client.InNamespace(r.Namespace),
		client.HasLabels{v1alpha1.LabelSecretType}); err != nil {
		return nil, fmt.Errorf("listing repository Secrets in %s: %w", r.Namespace, err)
	}
	want := git.NormalizeURL(repoURL)
	var exact, template *Repository
	for i := range list.Items {
		s := &list.Items[i]
		if !r.wanted(s.Labels[v1alpha1.LabelSecretType]) {
			continue
		}
		repo, err := repositoryFromSecret(s)
		if err != nil {
			return nil, err
		}
		if repo.Project != "" && repo.Project != project {
			continue // another project's
		}
		got := git.NormalizeURL(repo.URL)
		switch {
		case !repo.Template && got == want && betterScoped(repo, exact, project):
			exact = repo
		case repo.Template && templateCovers(got, want) && (template == nil || betterTemplate(repo, template, project)):
			template = repo
		}
	}
	if exact != nil && (exact.HasCredentials() || template == nil) {
		return exact, nil
	}
	if template != nil && exact != nil && loosens(exact, template) {
		// A project's repository Secret choosing its own proxy, or turning
		// TLS verification off, never gets credentials it does not own.
		return exact, nil
	}
	if template != nil && exact != nil {
		// The repository Secret's own options win; credentials come from the template.
		merged := *exact
		merged.Username, merged.Password, merged.SSHPrivateKey = template.Username, template.Password, template.SSHPrivateKey
		merged.TLSClientCertData, merged.TLSClientCertKey, merged.BearerToken = template.TLSClientCertData, template.TLSClientCertKey, template.BearerToken
		merged.GitHubApp, merged.CloudCreds = template.GitHubApp, template.CloudCreds
		merged.InsecureOCIForceHTTP = merged.InsecureOCIForceHTTP || template.InsecureOCIForceHTTP
		if merged.Proxy == "" {
			merged.Proxy, merged.NoProxy = template.Proxy, template.NoProxy
		}
		return &merged, nil
	}
	return template, nil
}

// URLByName returns the URL of the repository Secret whose name is name,
// as a Helm dependency's "@name" refers to it: the project's own first,
// then one of no project.
func (r *RepoCredentials) URLByName(ctx context.Context, name, project string) (string, error) {
	repos, err := RepositorySecrets(ctx, r.Reader, r.Namespace, RepoSecretType(false, r.Write))
	if err != nil {
		return "", err
	}
	var found *Repository
	for _, repo := range repos {
		if repo.Name == name && (repo.Project == "" || repo.Project == project) && betterScoped(repo, found, project) {
			found = repo
		}
	}
	if found == nil {
		return "", fmt.Errorf("no repository is named %q", name)
	}
	return found.URL, nil
}

// URLCovers reports whether a credential's URL covers a repository URL,
// as a credential template's does: after normalizing both, a prefix of it
// on the same host.
func URLCovers(credentialURL, repoURL string) bool {
	return templateCovers(git.NormalizeURL(credentialURL), git.NormalizeURL(repoURL))
}

// templateCovers reports whether a credential template's normalized URL
// prefix covers a normalized repository URL: a prefix of it on the same
// host, so https://git.example.com never covers
// https://git.example.com.elsewhere.io/x.
func templateCovers(prefix, repoURL string) bool {
	return strings.HasPrefix(repoURL, prefix) && hostOf(prefix) != "" && hostOf(prefix) == hostOf(repoURL)
}

// loosens reports whether a repository Secret would send a credential
// template's credentials another way than the template itself does: a
// Secret of a project (whose administrators may write it) that inherits
// an unscoped template and sets another proxy, or turns off TLS
// verification or TLS itself where the template keeps them on.
func loosens(repo, template *Repository) bool {
	if repo.Project == "" || repo.Project == template.Project {
		return false
	}
	return (repo.Proxy != "" && repo.Proxy != template.Proxy) || (repo.NoProxy != "" && repo.NoProxy != template.NoProxy) ||
		(repo.Insecure && !template.Insecure) || (repo.InsecureOCIForceHTTP && !template.InsecureOCIForceHTTP)
}

// betterScoped reports whether candidate should replace current as the
// repository Secret of a URL: the project's own wins over an unscoped one.
func betterScoped(candidate, current *Repository, project string) bool {
	return current == nil || (candidate.Project == project && current.Project != project)
}

// betterTemplate reports whether candidate is a better credential template
// than current: the project's own first, then the longest URL prefix.
func betterTemplate(candidate, current *Repository, project string) bool {
	if own, currentOwn := candidate.Project != "" && candidate.Project == project, current.Project != "" && current.Project == project; own != currentOwn {
		return own
	}
	return len(git.NormalizeURL(candidate.URL)) > len(git.NormalizeURL(current.URL))
}

// wanted reports whether a Secret type holds the credentials looked for.
func (r *RepoCredentials) wanted(secretType string) bool {
	if r.Write {
		return secretType == v1alpha1.SecretTypeRepositoryWrite || secretType == v1alpha1.SecretTypeRepoWriteCredentials
	}
	return secretType == v1alpha1.SecretTypeRepository || secretType == v1alpha1.SecretTypeRepoCredentials
}

// addTrust adds the TLS certificates of the URL's host from
// argocd-tls-certs-cm and the SSH known hosts from argocd-ssh-known-hosts-cm.
func (r *RepoCredentials) addTrust(ctx context.Context, repoURL string, creds *git.Creds) error {
	host := strings.ToLower(hostOf(repoURL))
	var certs corev1.ConfigMap
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: TLSCertsConfigMap}, &certs)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading ConfigMap/%s/%s: %w", r.Namespace, TLSCertsConfigMap, err)
	}
	if pem, ok := certs.Data[host]; ok && host != "" {
		creds.CAData = []byte(pem)
	}
	if creds.SSHPrivateKey == "" {
		return nil
	}
	var known corev1.ConfigMap
	err = r.Reader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: SSHKnownHostsConfigMap}, &known)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading ConfigMap/%s/%s: %w", r.Namespace, SSHKnownHostsConfigMap, err)
	}
	creds.KnownHosts = known.Data[sshKnownHostsKey]
	return nil
}

// hostOf returns the host name of an HTTPS, SSH or scp-style Git URL.
func hostOf(repoURL string) string {
	if u, err := url.Parse(repoURL); err == nil && u.Host != "" {
		return u.Hostname()
	}
	// git@host:path
	if at := strings.Index(repoURL, "@"); at >= 0 {
		rest := repoURL[at+1:]
		if colon := strings.Index(rest, ":"); colon >= 0 {
			return rest[:colon]
		}
	}
	return ""
}

// Secret returns the Secret Argo CD would write for the repository (or,
// with Template, the credential template; with Write, push credentials):
// repo-<hash> or creds-<hash> (write-repo-, write-creds-), the hash
// SecretNameHash of the URL and project. (Argo CD's 32-bit hash lets a
// URL be found that names another's Secret in a second; this one cannot
// be aimed at a name.)
func (r *Repository) Secret(namespace string) *corev1.Secret {
	prefix, kind := "repo", RepoSecretType(r.Template, r.Write)
	if r.Template {
		prefix = "creds"
	}
	if r.Write {
		prefix = "write-" + prefix
	}
	data := map[string][]byte{repositorySecretURLKey: []byte(r.URL)}
	for k, v := range map[string]string{"type": r.Type, "name": r.Name, "username": r.Username, "password": r.Password,
		"sshPrivateKey": r.SSHPrivateKey, "project": r.Project, "tlsClientCertData": r.TLSClientCertData, "tlsClientCertKey": r.TLSClientCertKey,
		"bearerToken": r.BearerToken, "proxy": r.Proxy, "noProxy": r.NoProxy,
		"githubAppPrivateKey": r.GitHubApp.PrivateKey, "githubAppEnterpriseBaseUrl": r.GitHubApp.EnterpriseBaseURL,
		"gcpServiceAccountKey": r.GCPServiceAccountKey, "azureServicePrincipalClientId": r.AzureServicePrincipalClientID,
		"azureServicePrincipalClientSecret": r.AzureServicePrincipalClientSecret, "azureServicePrincipalTenantId": r.AzureServicePrincipalTenantID,
		"azureActiveDirectoryEndpoint": r.AzureActiveDirectoryEndpoint} {
		if v != "" {
			data[k] = []byte(v)
		}
	}
	if r.GitHubApp.ID != 0 {
		data["githubAppID"] = []byte(strconv.FormatInt(int64(r.GitHubApp.ID), 10))
	}
	if r.GitHubApp.InstallationID != 0 {
		data["githubAppInstallationID"] = []byte(strconv.FormatInt(int64(r.GitHubApp.InstallationID), 10))
	}
	if r.Insecure {
		data["insecure"] = []byte("true")
	}
	if r.EnableOCI {
		data["enableOCI"] = []byte("true")
	}
	for key, on := range map[string]bool{"forceHttpBasicAuth": r.ForceHTTPBasicAuth, "insecureOCIForceHttp": r.InsecureOCIForceHTTP,
		"webhookManifestCacheWarmDisabled": r.WebhookManifestCacheWarmDisabled, "enableLfs": r.EnableLFS, "useAzureWorkloadIdentity": r.UseAzureWorkloadIdentity} {
		if on {
			data[key] = []byte("true")
		}
	}
	if r.Depth > 0 {
		data["depth"] = []byte(strconv.FormatInt(int64(r.Depth), 10))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + SecretNameHash(r.URL, r.Project), Namespace: namespace,
			Labels: map[string]string{v1alpha1.LabelSecretType: kind}, Annotations: map[string]string{v1alpha1.AnnotationManagedBy: v1alpha1.ManagedByArgoCD}},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}

// Redacted returns the repository without its password, keys, tokens and
// client secrets, as the API shows repositories.
func (r Repository) Redacted() Repository {
	r.Password, r.SSHPrivateKey, r.TLSClientCertKey, r.BearerToken, r.GitHubApp.PrivateKey = "", "", "", "", ""
	r.GCPServiceAccountKey, r.AzureServicePrincipalClientSecret = "", ""
	return r
}

// RepositorySecrets lists the Secrets of namespace labelled kind (see
// RepoSecretType): repositories, credential templates, or push
// credentials.
func RepositorySecrets(ctx context.Context, c client.Reader, namespace, kind string) ([]*Repository, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.LabelSecretType: kind}); err != nil {
		return nil, fmt.Errorf("listing %s Secrets in %s: %w", kind, namespace, err)
	}
	var out []*Repository
	for i := range list.Items {
		r, err := repositoryFromSecret(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
