package settings

import (
	"slices"
	"strings"
)

// knownKeys are the argocd-cm keys Argo CD documents, and knownPrefixes
// the families of keys named after something (a kind, an account, a
// platform, a version). Knowing a key does not mean every one of them
// changes what Capstan does: the README says which do.
var (
	knownKeys = []string{
		"url", "additionalUrls", "installationID", "admin.enabled", "passwordPattern",
		"statusbadge.enabled", "statusbadge.url", "users.anonymous.enabled", "users.session.duration",
		"ga.trackingid", "ga.anonymizeusers", "help.chatUrl", "help.chatText",
		"dex.config", "dex.storage", "oidc.config", "oidc.tls.insecure.skip.verify",
		"resource.customizations", "resource.ignoreResourceUpdatesEnabled", "resource.exclusions", "resource.inclusions",
		"resource.sensitive.mask.annotations", "resource.customLabels", "resource.includeEventLabelKeys",
		"resource.excludeEventLabelKeys", "resource.compareoptions", "resource.respectRBAC",
		"kustomize.enable", "jsonnet.enable", "helm.enable", "kustomize.buildOptions", "helm.valuesFileSchemes",
		"application.instanceLabelKey", "application.allowedNodeLabels", "application.resourceTrackingMethod",
		"ui.cssurl", "ui.bannercontent", "ui.bannerurl", "ui.bannerpermanent", "ui.bannerposition", "ui.loginButtonText",
		"timeout.reconciliation", "timeout.hard.reconciliation", "timeout.reconciliation.jitter",
		"webhook.refresh.jitter", "webhook.refresh.jitter.threshold", "webhook.maxPayloadSizeMB",
		"cluster.inClusterEnabled", "server.maxPodLogsToRender", "exec.enabled", "exec.shells",
		"project.links", "application.links", "resource.links", "extension.config", "globalProjects",
		"application.sync.impersonation.enabled", "application.sync.impersonation.enforced",
		"application.sync.requireOverridePrivilegeForRevisionSync",
		"commit.author.name", "commit.author.email", "sourceHydrator.commitMessageTemplate", "sourceHydrator.readmeMessageTemplate",
		// Older keys Argo CD still reads.
		"repositories", "repository.credentials", "configManagementPlugins",
	}
	knownPrefixes = []string{
		"accounts.", "help.download.", "extension.config.",
		"resource.customizations.health.", "resource.customizations.actions.", "resource.customizations.ignoreDifferences.",
		"resource.customizations.ignoreResourceUpdates.", "resource.customizations.knownTypeFields.",
		"resource.customizations.useOpenLibs.",
		"kustomize.path.", "kustomize.buildOptions.", "kustomize.version.",
	}
)

// UnknownKeys are argocd-cm's keys that Argo CD does not document: most
// often a misspelt one, which does nothing. Sorted.
func (a *ArgoCD) UnknownKeys() []string {
	var out []string
	for _, k := range sortedKeys(a.Data) {
		if !slices.Contains(knownKeys, k) && !slices.ContainsFunc(knownPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out = append(out, k)
		}
	}
	return out
}
