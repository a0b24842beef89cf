package settings

import (
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/keytests"
)

// keyTests names, for each argocd-cm key (or family, ending in ".")
// Capstan acts on, the tests that show it doing what Argo CD documents.
var keyTests = map[string][]string{
	"accounts.":                                                {"TestAccountsAndTokens", "TestLoginSessionsAndAPIKeys", "TestAccounts"},
	"additionalUrls":                                           {"TestSSOLoginThroughAdditionalURL", "TestDexConfig"},
	"admin.enabled":                                            {"TestPublicSettings", "TestAccounts"},
	"application.allowedNodeLabels":                            {"TestTreeCustomLabelsAndNodeLabels", "TestAllowedNodeLabelsAndCustomLabels"},
	"application.instanceLabelKey":                             {"TestLabelTracking", "TestInstanceLabelKey"},
	"application.links":                                        {"TestDeepLinksGlobalProjectsAndEvents", "TestUISettingsPages"},
	"application.resourceTrackingMethod":                       {"TestLabelTracking", "TestLoadArgoCD"},
	"application.sync.impersonation.enabled":                   {"TestSyncImpersonation", "TestResourceChangesActAsTheSyncs"},
	"application.sync.impersonation.enforced":                  {"TestSyncUser"},
	"application.sync.requireOverridePrivilegeForRevisionSync": {"TestRevisionSyncNeedsOverride"},
	"cluster.inClusterEnabled":                                 {"TestInClusterDisabled"},
	"commit.author.email":                                      {"TestSourceHydratorHydrates"},
	"commit.author.name":                                       {"TestSourceHydratorHydrates"},
	"dex.auth.connectorId":                                     {"TestSSOThroughBundledDex"},
	"dex.config":                                               {"TestSSOThroughBundledDex", "TestRundex", "TestDexConfig"},
	"exec.enabled":                                             {"TestTerminalRefusals", "TestUIWithController", "TestPublicSettings"},
	"exec.shells":                                              {"TestTerminalShells"},
	"extension.config":                                         {"TestProxyExtensions"},
	"extension.config.":                                        {"TestProxyExtensions", "TestProxyExtensionsOff"},
	"globalProjects":                                           {"TestDeepLinksGlobalProjectsAndEvents"},
	"helm.enable":                                              {"TestDisabledTools"},
	"helm.valuesFileSchemes":                                   {"TestRemoteValueFiles"},
	"help.chatText":                                            {"TestPublicSettings"},
	"help.chatUrl":                                             {"TestPublicSettings"},
	"help.download.":                                           {"TestUISettingsPages"},
	"installationID":                                           {"TestInstallationID", "TestPublicSettings"},
	"jsonnet.enable":                                           {"TestDisabledTools"},
	"kustomize.buildOptions":                                   {"TestKustomizeBuildOptions", "TestKustomizeVersionsAndHelmCharts"},
	"kustomize.buildOptions.":                                  {"TestKustomizeVersionsAndHelmCharts", "TestKustomizeVersions"},
	"kustomize.enable":                                         {"TestDisabledTools"},
	"kustomize.path.":                                          {"TestKustomizeVersionsAndHelmCharts", "TestKustomizeVersions"},
	"kustomize.version.":                                       {"TestKustomizeVersions", "TestKustomizeVersionsAndHelmCharts"},
	"oidc.config":                                              {"TestSSOLoginThroughDex", "TestOIDCInsecureSkipVerify", "TestLoginWithSSO"},
	"oidc.tls.insecure.skip.verify":                            {"TestOIDCInsecureSkipVerify"},
	"passwordPattern":                                          {"TestPasswordPattern"},
	"project.links":                                            {"TestDeepLinksGlobalProjectsAndEvents", "TestUISettingsPages"},
	"resource.compareoptions":                                  {"TestCompareOptionsIgnoreAggregatedRoles", "TestCompareOptions", "TestAggregatedRoleRule"},
	"resource.customLabels":                                    {"TestTreeCustomLabelsAndNodeLabels", "TestAllowedNodeLabelsAndCustomLabels"},
	"resource.customizations":                                  {"TestCustomLuaChecks", "TestBadLua", "TestCustomizations"},
	"resource.customizations.actions.":                         {"TestCustomActions", "TestAppResourceCommands"},
	"resource.customizations.health.":                          {"TestCustomLuaChecks", "TestHelmKustomizeAndSecondCluster", "TestBadLua"},
	"resource.customizations.ignoreDifferences.":               {"TestIgnoreDifferencesCustomization", "TestCustomizations"},
	"resource.customizations.ignoreResourceUpdates.":           {"TestIgnoreResourceUpdates"},
	"resource.excludeEventLabelKeys":                           {"TestEventLabels", "TestDeepLinksGlobalProjectsAndEvents"},
	"resource.exclusions":                                      {"TestExcludedKindIsNeitherSyncedNorPruned", "TestResourceFilter"},
	"resource.ignoreResourceUpdatesEnabled":                    {"TestIgnoreResourceUpdates"},
	"resource.includeEventLabelKeys":                           {"TestEventLabels", "TestDeepLinksGlobalProjectsAndEvents"},
	"resource.inclusions":                                      {"TestExcludedKindIsNeitherSyncedNorPruned", "TestResourceFilter"},
	"resource.links":                                           {"TestDeepLinksGlobalProjectsAndEvents"},
	"resource.respectRBAC":                                     {"TestRespectRBAC", "TestRestrictedKindIsComparedObjectByObject"},
	"resource.sensitive.mask.annotations":                      {"TestManifestsMaskSecrets"},
	"server.maxPodLogsToRender":                                {"TestMaxPodLogsToRender"},
	"server.rbac.rollback.enforce.enable":                      {"TestRollbackActionEnforced"},
	"sourceHydrator.commitMessageTemplate":                     {"TestMessage"},
	"sourceHydrator.readmeMessageTemplate":                     {"TestReadmeTemplate"},
	"statusbadge.enabled":                                      {"TestBadge", "TestUISettingsPages", "TestPublicSettings"},
	"statusbadge.url":                                          {"TestPublicSettings"},
	"timeout.hard.reconciliation":                              {"TestHardResync"},
	"timeout.reconciliation":                                   {"TestNextResync", "TestBindEnv"},
	"timeout.reconciliation.jitter":                            {"TestNextResync"},
	"ui.bannercontent":                                         {"TestUISettingsPages", "TestPublicSettings"},
	"ui.bannerpermanent":                                       {"TestPublicSettings"},
	"ui.bannerposition":                                        {"TestPublicSettings"},
	"ui.bannerurl":                                             {"TestUISettingsPages"},
	"ui.cssurl":                                                {"TestUISettingsPages"},
	"url":                                                      {"TestRundex", "TestSSOThroughBundledDex", "TestSSOLoginThroughDex"},
	"users.anonymous.enabled":                                  {"TestAnonymousUsers"},
	"users.session.duration":                                   {"TestSessionDuration"},
	"webhook.maxPayloadSizeMB":                                 {"TestWebhookPayloadLimit"},
	"webhook.refresh.jitter":                                   {"TestWebhookRefreshJitter"},
	"webhook.refresh.jitter.threshold":                         {"TestWebhookRefreshJitter"},
}

// keysTestedForWiring are the keys of keyTests whose tests show the
// value read, but not yet what it changes: none. The list only shrinks.
var keysTestedForWiring []string

// TestEveryActedOnKeyHasTests: every documented argocd-cm key Capstan acts
// on names tests that exist, and only those keys do.
func TestEveryActedOnKeyHasTests(t *testing.T) {
	var actedOn []string
	for _, k := range DocumentedKeys() {
		if k.Reason == "" {
			actedOn = append(actedOn, k.Key)
		}
	}
	keytests.Check(t, "../..", actedOn, keyTests, keysTestedForWiring)
}
