package settings

import (
	"slices"
	"strings"
)

// knownKeys are the argocd-cm keys Argo CD documents, and knownPrefixes
// the families of keys named after something (a kind, an account, a
// platform, a version). Knowing a key does not mean it changes what
// Capstan does: those that do not are in noEffectKeys, with why.
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
		// New in Argo CD 3.6.
		"dex.auth.connectorId", "resource.manifest.compression.enabled", "resource.manifest.storage",
		"resource.manifest.compression", "resource.selectors",
		"server.rbac.rollback.enforce.enable", "ui.view.resources.disabled",
		// Older keys, no longer read by Argo CD 3 either.
		"repositories", "repository.credentials", "configManagementPlugins",
	}
	knownPrefixes = []string{
		"accounts.", "help.download.", "extension.config.",
		"resource.customizations.health.", "resource.customizations.actions.", "resource.customizations.ignoreDifferences.",
		"resource.customizations.ignoreResourceUpdates.", "resource.customizations.knownTypeFields.",
		"resource.customizations.useOpenLibs.",
		"kustomize.path.", "kustomize.buildOptions.", "kustomize.version.",
	}
	// noEffectKeys are the known keys (or, ending in ".", families of
	// keys) that change nothing in Capstan, each with why. The controller
	// logs each one set, once per version of argocd-cm: a setting that
	// does nothing is never silent.
	noEffectKeys = map[string]string{
		"dex.storage":                           "the bundled Dex is configured by dex.config alone",
		"ui.loginButtonText":                    "the login page's SSO button names the provider of oidc.config or dex.config",
		"configManagementPlugins":               "plugins are ConfigManagementPlugin sidecars, as in Argo CD since 2.8; argocd-cm plugins are not run",
		"ga.trackingid":                         "the settings API passes it on, but Capstan's web UI sends no analytics",
		"ga.anonymizeusers":                     "the settings API passes it on, but Capstan's web UI sends no analytics",
		"resource.manifest.compression.enabled": "the live cache holds each object once, decoded; it is not kept serialized or compressed",
		"resource.manifest.storage":             "the live cache holds each object once, decoded; it is not kept serialized or compressed",
		"resource.manifest.compression":         "the live cache holds each object once, decoded; it is not kept serialized or compressed",
		"resource.selectors":                    "every object of a watched kind is cached; watches are not narrowed by label selectors",
		"ui.view.resources.disabled":            "Capstan's web UI has no managed Resources view to turn off",
		"repositories":                          "Argo CD 3 no longer reads repositories from argocd-cm; declare them as repository Secrets",
		"repository.credentials":                "Argo CD 3 no longer reads credential templates from argocd-cm; declare them as repo-creds Secrets",
		"resource.customizations.knownTypeFields.": "comparisons are against a server-side dry-run apply, so a custom resource's " +
			"desired fields come back in the form its live ones are stored in; no field needs a Kubernetes type named to be normalized",
		"resource.customizations.useOpenLibs.": "Lua scripts always have the base, table, string, math and safe os libraries, " +
			"and never the io or full os ones: no script reaches files or programs",
	}
)

// KeyReason is a setting and why it changes nothing.
type KeyReason struct {
	Key, Reason string
}

// NoEffectKeys are argocd-cm's keys that are set but change nothing in
// Capstan, each with why. Sorted by key.
func (a *ArgoCD) NoEffectKeys() []KeyReason {
	var out []KeyReason
	for _, k := range sortedKeys(a.Data) {
		if why, ok := noEffectKeys[k]; ok {
			out = append(out, KeyReason{Key: k, Reason: why})
			continue
		}
		for family, why := range noEffectKeys {
			if strings.HasSuffix(family, ".") && strings.HasPrefix(k, family) {
				out = append(out, KeyReason{Key: k, Reason: why})
				break
			}
		}
	}
	return out
}

// DocumentedKeys are the argocd-cm keys Argo CD documents, families of
// keys ending in ".", sorted, each with why it changes nothing in
// Capstan; an empty Reason: Capstan acts on it.
func DocumentedKeys() []KeyReason {
	var out []KeyReason
	for _, k := range append(slices.Clone(knownKeys), knownPrefixes...) {
		out = append(out, KeyReason{Key: k, Reason: noEffectKeys[k]})
	}
	slices.SortFunc(out, func(a, b KeyReason) int { return strings.Compare(a.Key, b.Key) })
	return out
}

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
