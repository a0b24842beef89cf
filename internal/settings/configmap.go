package settings

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// ReadConfigMap reads one of the settings ConfigMaps (argocd-cm,
// argocd-rbac-cm, …) from r, which is usually an informer cache. A
// ConfigMap that does not exist reads as empty, with no resourceVersion:
// Argo CD's defaults apply.
func ReadConfigMap(ctx context.Context, r client.Reader, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return &corev1.ConfigMap{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap/%s/%s: %w", namespace, name, err)
	}
	return cm, nil
}

// ArgoCD is argocd-cm as read.
type ArgoCD struct {
	// Data holds every key; empty when the ConfigMap does not exist.
	Data map[string]string
	// Version is its resourceVersion, "" when it does not exist: what is
	// derived from the settings (compiled health checks) is kept per version.
	Version string
}

// TrackingMethod is application.resourceTrackingMethod; "" means Argo
// CD's default.
func (a *ArgoCD) TrackingMethod() string { return a.Data["application.resourceTrackingMethod"] }

// InstanceLabelKey is application.instanceLabelKey, the label the label
// tracking methods use; "" means Argo CD's app.kubernetes.io/instance.
func (a *ArgoCD) InstanceLabelKey() string { return a.Data["application.instanceLabelKey"] }

// InstallationID is installationID: the name this installation marks the
// objects it tracks by annotation with, so that several installations can
// share a cluster. "" when unset.
func (a *ArgoCD) InstallationID() string { return a.Data["installationID"] }

// LoadArgoCD reads argocd-cm from namespace.
func LoadArgoCD(ctx context.Context, r client.Reader, namespace string) (*ArgoCD, error) {
	cm, err := ReadConfigMap(ctx, r, namespace, CMName)
	if err != nil {
		return nil, err
	}
	data := cm.Data
	if data == nil {
		data = map[string]string{}
	}
	return &ArgoCD{Data: data, Version: cm.ResourceVersion}, nil
}

// The argocd-cm keys that hold deep links, by what the links are for.
const (
	ApplicationLinks = "application.links"
	ResourceLinks    = "resource.links"
	ProjectLinks     = "project.links"
)

// DeepLink is one deep link of argocd-cm: a URL template shown beside an
// Application, a resource or a project, when its condition holds.
type DeepLink struct {
	// URL is a Go template over the object the link is for.
	URL string `json:"url"`
	// Title is what the link shows.
	Title string `json:"title"`
	// Description, IconClass and If are optional.
	Description *string `json:"description,omitempty"`
	IconClass   *string `json:"icon.class,omitempty"`
	// If is an expression (expr-lang) the link needs to be true.
	If *string `json:"if,omitempty"`
}

// DeepLinks reads the deep links under key (ApplicationLinks, …); none
// when the key is absent.
func (a *ArgoCD) DeepLinks(key string) ([]DeepLink, error) {
	var links []DeepLink
	if err := yaml.Unmarshal([]byte(a.Data[key]), &links); err != nil {
		return nil, fmt.Errorf("argocd-cm %s: %w", key, err)
	}
	return links, nil
}

// GlobalProject is an entry of argocd-cm globalProjects: the project
// whose settings every project its label selector matches also gets.
type GlobalProject struct {
	ProjectName   string                `json:"projectName"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector"`
}

// GlobalProjects reads argocd-cm globalProjects. Most installs have none,
// and every reconcile asks, so an absent or blank key costs no parse.
func (a *ArgoCD) GlobalProjects() ([]GlobalProject, error) {
	raw := a.Data["globalProjects"]
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var out []GlobalProject
	if err := yaml.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("argocd-cm globalProjects: %w", err)
	}
	return out, nil
}

// StatusBadgeEnabled is statusbadge.enabled: the /api/badge images show
// real statuses only when it is "true".
func (a *ArgoCD) StatusBadgeEnabled() bool { return a.Data["statusbadge.enabled"] == "true" }

// KustomizeBuildOptions is kustomize.buildOptions: the `kustomize
// build` flags every Kustomize source is built with.
func (a *ArgoCD) KustomizeBuildOptions() string { return a.Data["kustomize.buildOptions"] }

// KustomizeVersions are the Kustomize programs registered by version:
// kustomize.path.<version> (or the older kustomize.version.<version>),
// each with kustomize.buildOptions.<version>; sorted by version.
func (a *ArgoCD) KustomizeVersions() []v1alpha1.KustomizeVersion {
	paths := map[string]string{}
	for key, value := range a.Data {
		if name, ok := strings.CutPrefix(key, "kustomize.version."); ok && paths[name] == "" {
			paths[name] = value
		}
	}
	for key, value := range a.Data {
		if name, ok := strings.CutPrefix(key, "kustomize.path."); ok {
			paths[name] = value // wins over the older key
		}
	}
	out := make([]v1alpha1.KustomizeVersion, 0, len(paths))
	for name, path := range paths {
		out = append(out, v1alpha1.KustomizeVersion{Name: name, Path: path, BuildOptions: a.Data["kustomize.buildOptions."+name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// HydratorCommitMessageTemplate is sourceHydrator.commitMessageTemplate,
// the source hydrator's commit message; empty means Argo CD's default.
func (a *ArgoCD) HydratorCommitMessageTemplate() string {
	return a.Data["sourceHydrator.commitMessageTemplate"]
}

// HydratorReadmeTemplate is sourceHydrator.readmeMessageTemplate, the
// template of the README.md beside hydrated manifests; empty means Argo
// CD's.
func (a *ArgoCD) HydratorReadmeTemplate() string {
	return a.Data["sourceHydrator.readmeMessageTemplate"]
}

// HydratorCommitAuthor is commit.author.name and commit.author.email, the
// source hydrator's commits' author; Argo CD's defaults are "Argo CD" and
// argo-cd@example.com.
func (a *ArgoCD) HydratorCommitAuthor() (name, email string) {
	return cmp.Or(a.Data["commit.author.name"], "Argo CD"), cmp.Or(a.Data["commit.author.email"], "argo-cd@example.com")
}

// ExecEnabled is exec.enabled: users RBAC allows (exec, create) may open a
// terminal in an Application's pods.
func (a *ArgoCD) ExecEnabled() bool { return a.Data["exec.enabled"] == "true" }

// MaxPodLogsToRender is server.maxPodLogsToRender: the most Pods whose
// logs one request streams (a workload's, or an app's). Default 10, as
// Argo CD's.
func (a *ArgoCD) MaxPodLogsToRender() (int, error) {
	v := strings.TrimSpace(a.Data["server.maxPodLogsToRender"])
	if v == "" {
		return 10, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("argocd-cm server.maxPodLogsToRender %q: want a whole number", v)
	}
	return n, nil
}

// DefaultWebhookMaxPayloadMB is webhook.maxPayloadSizeMB's default, Argo
// CD's.
const DefaultWebhookMaxPayloadMB = 50

// WebhookMaxPayloadBytes is webhook.maxPayloadSizeMB in bytes: the largest
// Git provider event the API server reads. Default 50 MiB, as Argo CD's.
func (a *ArgoCD) WebhookMaxPayloadBytes() (int64, error) {
	v := strings.TrimSpace(a.Data["webhook.maxPayloadSizeMB"])
	if v == "" {
		return DefaultWebhookMaxPayloadMB << 20, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > 1<<20 {
		return DefaultWebhookMaxPayloadMB << 20, fmt.Errorf("argocd-cm webhook.maxPayloadSizeMB %q: want a whole number of megabytes above 0", v)
	}
	return n << 20, nil
}

// ExecShells is exec.shells: the shells a terminal may run, in the order
// tried when none is asked for. Default bash, sh, powershell, cmd, as Argo
// CD's.
func (a *ArgoCD) ExecShells() []string {
	return commaList(cmp.Or(a.Data["exec.shells"], "bash,sh,powershell,cmd"))
}

// URLs are argocd-cm's url and additionalUrls: the addresses users reach
// Argo CD at.
func (a *ArgoCD) URLs() []string {
	var out []string
	if u := strings.TrimSpace(a.Data["url"]); u != "" {
		out = append(out, u)
	}
	return append(out, a.AdditionalURLs()...)
}

// AdditionalURLs is additionalUrls: other addresses users reach Argo CD
// at, besides url (a YAML list). SSO logins come back to the one a browser
// used. Default none; a value that is not a list reads as none.
func (a *ArgoCD) AdditionalURLs() []string {
	var more []string
	if err := yaml.Unmarshal([]byte(a.Data["additionalUrls"]), &more); err != nil {
		return nil
	}
	out := make([]string, 0, len(more))
	for _, u := range more {
		if u = strings.TrimSuffix(strings.TrimSpace(u), "/"); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// SensitiveAnnotations is resource.sensitive.mask.annotations: the
// annotations of Secrets whose values the API and UI show masked, as the
// Secrets' data. Default none.
func (a *ArgoCD) SensitiveAnnotations() []string {
	return commaList(a.Data["resource.sensitive.mask.annotations"])
}

// CustomLabels is resource.customLabels: the label keys whose values the
// resource tree shows beside each object that has them, as Argo CD's UI
// shows them. Default none.
func (a *ArgoCD) CustomLabels() []string {
	return commaList(a.Data["resource.customLabels"])
}

// AllowedNodeLabels is application.allowedNodeLabels: the labels of the
// cluster nodes the resource tree's hosts (the pods view) show. A key that
// is not a valid label key is left out. Default none: a node's labels can
// name zones, instance types and tenants, so none is shown unless asked.
func (a *ArgoCD) AllowedNodeLabels() []string {
	var out []string
	for _, k := range commaList(a.Data["application.allowedNodeLabels"]) {
		if len(validation.IsQualifiedName(k)) == 0 {
			out = append(out, k)
		}
	}
	return out
}

// EventLabelKeys are resource.includeEventLabelKeys and
// resource.excludeEventLabelKeys: glob patterns of the Application's (and
// its project's) label keys that the Events recorded for it carry, and of
// those it must not. Default none: Events carry no labels.
func (a *ArgoCD) EventLabelKeys() (include, exclude []string) {
	return commaList(a.Data["resource.includeEventLabelKeys"]), commaList(a.Data["resource.excludeEventLabelKeys"])
}

// DisabledTools are the config management tools argocd-cm turns off with
// helm.enable, kustomize.enable or jsonnet.enable: a set value other than
// "true" turns its tool off, as in Argo CD; unset keeps it on. Named as
// the keys' prefixes, in that order.
func (a *ArgoCD) DisabledTools() []string {
	var off []string
	for _, tool := range []string{"helm", "kustomize", "jsonnet"} {
		if v := a.Data[tool+".enable"]; v != "" && v != "true" {
			off = append(off, tool)
		}
	}
	return off
}

// commaList splits a comma-separated setting, dropping empty entries.
func commaList(raw string) []string {
	var out []string
	for _, s := range strings.Split(raw, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// HelmValuesFileSchemes is helm.valuesFileSchemes: the URL schemes Helm
// value files may be fetched over. Nil when the key is absent (Argo CD's
// default, https and http, applies); empty when it lists none.
func (a *ArgoCD) HelmValuesFileSchemes() []string {
	raw, ok := a.Data["helm.valuesFileSchemes"]
	if !ok {
		return nil
	}
	return append([]string{}, commaList(raw)...)
}

// SyncImpersonationEnabled is application.sync.impersonation.enabled:
// syncs act as the service account the project names for the
// destination (destinationServiceAccounts).
func (a *ArgoCD) SyncImpersonationEnabled() bool {
	return a.Data["application.sync.impersonation.enabled"] == "true"
}

// SyncImpersonationEnforced is application.sync.impersonation.enforced:
// true (the default) fails a sync no service account matches; false lets
// it run with the controller's own rights.
func (a *ArgoCD) SyncImpersonationEnforced() bool {
	return a.Data["application.sync.impersonation.enforced"] != "false"
}

// InClusterEnabled is cluster.inClusterEnabled: "false" takes away the
// in-cluster destination (https://kubernetes.default.svc), even one a
// cluster Secret defines. Default true.
func (a *ArgoCD) InClusterEnabled() bool { return a.Data["cluster.inClusterEnabled"] != "false" }

// RevisionSyncNeedsOverride is
// application.sync.requireOverridePrivilegeForRevisionSync: a sync to
// another revision than a source's own needs the override action too.
// Default false.
func (a *ArgoCD) RevisionSyncNeedsOverride() bool {
	return a.Data["application.sync.requireOverridePrivilegeForRevisionSync"] == "true"
}

// RollbackActionEnforced is server.rbac.rollback.enforce.enable: a
// rollback needs the applications rollback action; otherwise, as by
// default, it needs sync.
func (a *ArgoCD) RollbackActionEnforced() bool {
	return a.Data["server.rbac.rollback.enforce.enable"] == "true"
}

// SessionDurationKey is how long a local user's session lasts.
const SessionDurationKey = "users.session.duration"

// DefaultSessionDuration is Argo CD's session length.
const DefaultSessionDuration = 24 * time.Hour

// SessionDuration is users.session.duration ("1h", "30m"), the default
// when unset; a value that is not a positive duration is an error, and
// DefaultSessionDuration comes with it.
func (a *ArgoCD) SessionDuration() (time.Duration, error) {
	v := a.Data[SessionDurationKey]
	if v == "" {
		return DefaultSessionDuration, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return DefaultSessionDuration, fmt.Errorf("argocd-cm %s: %q is not a positive duration such as 24h", SessionDurationKey, v)
	}
	return d, nil
}

// AnonymousEnabledKey lets requests without a session in as the anonymous
// user, whom policy.default alone authorizes.
const AnonymousEnabledKey = "users.anonymous.enabled"

// AnonymousEnabled is users.anonymous.enabled ("true"; off by default).
func (a *ArgoCD) AnonymousEnabled() bool { return a.Data[AnonymousEnabledKey] == "true" }

// PasswordPatternKey is the regular expression new local passwords must
// match.
const PasswordPatternKey = "passwordPattern"

// DefaultPasswordPattern is Argo CD's: 8 to 32 characters.
const DefaultPasswordPattern = "^.{8,32}$"

// PasswordPattern is passwordPattern compiled (the default when unset); a
// pattern that does not compile is an error naming it.
func (a *ArgoCD) PasswordPattern() (*regexp.Regexp, error) {
	p := a.Data[PasswordPatternKey]
	if p == "" {
		p = DefaultPasswordPattern
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("argocd-cm %s: %w", PasswordPatternKey, err)
	}
	return re, nil
}
