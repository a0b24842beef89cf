package commands

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/component"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/keytests"
)

// paramTests names, for each argocd-cmd-params-cm key a component acts
// on, the tests that show what it changes. Keys of one family (the log
// settings of every component, say) share the tests of their mechanism.
var paramTests = map[string][]string{
	"application.namespaces":                                    {"TestApplicationsInOtherNamespaces", "TestApplicationNamespacesServed", "TestSelfServiceNotifications"},
	"applicationsetcontroller.allowed.scm.providers":            {"TestSCMPolicy"},
	"applicationsetcontroller.concurrent.reconciliations.max":   {"TestEveryParamIsRead"},
	"applicationsetcontroller.debug":                            {"TestNewLogger", "TestEveryParamIsRead"},
	"applicationsetcontroller.dryrun":                           {"TestControllerOptions"},
	"applicationsetcontroller.enable.github.api.metrics":        {"TestGitHubAPIMetrics"},
	"applicationsetcontroller.enable.leader.election":           {"TestEveryParamIsRead"},
	"applicationsetcontroller.enable.new.git.file.globbing":     {"TestGitListingOverGRPC"},
	"applicationsetcontroller.enable.policy.override":           {"TestControllerOptions"},
	"applicationsetcontroller.enable.progressive.syncs":         {"TestRollingSync", "TestRollingSyncWithTheController", "TestRollingSyncInvalid"},
	"applicationsetcontroller.enable.scm.providers":             {"TestSCMPolicy"},
	"applicationsetcontroller.enable.tokenref.strict.mode":      {"TestSCMPolicy"},
	"applicationsetcontroller.global.preserved.annotations":     {"TestControllerOptions"},
	"applicationsetcontroller.global.preserved.labels":          {"TestControllerOptions"},
	"applicationsetcontroller.k8s.client.burst":                 {"TestEveryParamIsRead"},
	"applicationsetcontroller.k8s.client.max.idle.connections":  {"TestConnectionTuning", "TestFromEnv"},
	"applicationsetcontroller.k8s.client.qps":                   {"TestEveryParamIsRead"},
	"applicationsetcontroller.k8s.tcp.idle.timeout":             {"TestConnectionTuning", "TestFromEnv"},
	"applicationsetcontroller.k8s.tcp.keepalive":                {"TestFromEnv", "TestConnectionTuning"},
	"applicationsetcontroller.k8s.tcp.timeout":                  {"TestFromEnv", "TestConnectionTuning"},
	"applicationsetcontroller.k8s.tls.handshake.timeout":        {"TestConnectionTuning", "TestFromEnv"},
	"applicationsetcontroller.log.format":                       {"TestNewLogger"},
	"applicationsetcontroller.log.level":                        {"TestNewLogger"},
	"applicationsetcontroller.namespaces":                       {"TestApplicationSetInAnotherNamespace"},
	"applicationsetcontroller.policy":                           {"TestSelectorAndPolicy", "TestClustersTimesListLifecycle"},
	"applicationsetcontroller.profile.enabled":                  {"TestRepoServerUsesRepositorySecrets", "TestPath"},
	"applicationsetcontroller.repo.server.ca.cert.path":         {"TestClientTLS"},
	"applicationsetcontroller.repo.server.client.cert.key.path": {"TestMutualTLS"},
	"applicationsetcontroller.repo.server.client.cert.path":     {"TestMutualTLS"},
	"applicationsetcontroller.repo.server.plaintext":            {"TestClientTLS", "TestPlaintext"},
	"applicationsetcontroller.repo.server.strict.tls":           {"TestClientTLS", "TestStrictTLSWithoutCertificates"},
	"applicationsetcontroller.repo.server.timeout.seconds":      {"TestCallTimeout"},
	"applicationsetcontroller.requeue.after":                    {"TestControllerOptions"},
	"applicationsetcontroller.scm.root.ca.path":                 {"TestProviderRootCAPath"},
	"applicationsetcontroller.status.max.resources.count":       {"TestControllerOptions"},
	"applicationsetcontroller.wq.backoff.factor":                {"TestWorkqueueBackoff", "TestWorkqueueFlags"},
	"applicationsetcontroller.wq.basedelay.ns":                  {"TestWorkqueueBackoff", "TestWorkqueueFlags"},
	"applicationsetcontroller.wq.bucket.qps":                    {"TestWorkqueueFlags"},
	"applicationsetcontroller.wq.bucket.size":                   {"TestWorkqueueFlags"},
	"applicationsetcontroller.wq.cooldown.ns":                   {"TestWorkqueueBackoff", "TestWorkqueueFlags"},
	"applicationsetcontroller.wq.maxdelay.ns":                   {"TestWorkqueueBackoff", "TestWorkqueueFlags"},
	"commitserver.signing.key.passphrase.file":                  {"TestImportSigningKey", "TestSourceHydratorHydrates"},
	"commitserver.signing.key.path":                             {"TestImportSigningKey", "TestSourceHydratorHydrates", "TestWriterSignsAndSignsOff"},
	"controller.hydration.processors":                           {"TestHydrationWaitsForATurn"},
	"controller.ignore.normalizer.jq.timeout":                   {"TestIgnoreJQTimeout", "TestJQPathsAreBounded"},
	"controller.k8s.client.burst":                               {"TestEveryParamIsRead"},
	"controller.k8s.client.max.idle.connections":                {"TestConnectionTuning", "TestFromEnv"},
	"controller.k8s.client.qps":                                 {"TestEveryParamIsRead"},
	"controller.k8s.tcp.idle.timeout":                           {"TestConnectionTuning", "TestFromEnv"},
	"controller.k8s.tcp.keepalive":                              {"TestFromEnv", "TestConnectionTuning"},
	"controller.k8s.tcp.timeout":                                {"TestFromEnv", "TestConnectionTuning"},
	"controller.k8s.tls.handshake.timeout":                      {"TestConnectionTuning", "TestFromEnv"},
	"controller.k8sclient.retry.base.backoff":                   {"TestRetryStopsWithTheContext", "TestRetryRidesOutServerErrors", "TestFromEnv"},
	"controller.k8sclient.retry.max":                            {"TestRetryRidesOutServerErrors", "TestClustersGetTheTransportTuning", "TestFromEnv"},
	"controller.kubectl.parallelism.limit":                      {"TestLimitBoundsWrites"},
	"controller.log.format":                                     {"TestNewLogger"},
	"controller.log.level":                                      {"TestNewLogger"},
	"controller.metrics.application.conditions":                 {"TestAppLabelsAndConditions"},
	"controller.metrics.application.labels":                     {"TestAppLabelsAndConditions"},
	"controller.metrics.cluster.labels":                         {"TestScrape"},
	"controller.operation.processors":                           {"TestOperationWorkersBoundSyncs"},
	"controller.profile.enabled":                                {"TestRepoServerUsesRepositorySecrets", "TestPath"},
	"controller.repo.error.grace.period.seconds":                {"TestRepoErrorGracePeriod", "TestRepoGraceHides"},
	"controller.repo.server.ca.cert.path":                       {"TestClientTLS"},
	"controller.repo.server.client.cert.key.path":               {"TestMutualTLS"},
	"controller.repo.server.client.cert.path":                   {"TestMutualTLS"},
	"controller.repo.server.plaintext":                          {"TestClientTLS", "TestPlaintext"},
	"controller.repo.server.strict.tls":                         {"TestClientTLS", "TestStrictTLSWithoutCertificates"},
	"controller.repo.server.timeout.seconds":                    {"TestCallTimeout"},
	"controller.self.heal.backoff.cap.seconds":                  {"TestSelfHealBackoff"},
	"controller.self.heal.backoff.factor":                       {"TestSelfHealBackoff"},
	"controller.self.heal.backoff.timeout.seconds":              {"TestSelfHealBackoff", "TestSelfHealBackoffSpacesSyncs"},
	"controller.self.heal.timeout.seconds":                      {"TestSelfHealBackoff"},
	"controller.sharding.algorithm":                             {"TestRoundRobinShards", "TestConsistentHashing", "TestParseSharding"},
	"controller.status.processors":                              {"TestBindEnv"},
	"controller.sync.timeout.seconds":                           {"TestSyncTimeout"},
	"controller.sync.wave.delay.seconds":                        {"TestSyncWaveDelay"},
	"dexserver.disable.tls":                                     {"TestDexConfig", "TestRundex", "TestSSOThroughBundledDex"},
	"dexserver.log.format":                                      {"TestNewLogger"},
	"dexserver.log.level":                                       {"TestNewLogger"},
	"hydrator.enabled":                                          {"TestSourceHydratorHydrates", "TestWriteRepositories", "TestSourceHydratorSyncsTheHydratedBranch"},
	"log.format.timestamp":                                      {"TestNewLogger"},
	"notificationscontroller.log.format":                        {"TestNewLogger"},
	"notificationscontroller.log.level":                         {"TestNewLogger"},
	"notificationscontroller.processors.count":                  {"TestEveryParamIsRead"},
	"notificationscontroller.repo.server.ca.cert.path":          {"TestClientTLS"},
	"notificationscontroller.repo.server.client.cert.key.path":  {"TestMutualTLS"},
	"notificationscontroller.repo.server.client.cert.path":      {"TestMutualTLS"},
	"notificationscontroller.repo.server.plaintext":             {"TestClientTLS", "TestPlaintext"},
	"notificationscontroller.selfservice.enabled":               {"TestSelfServiceNotifications"},
	"otlp.address":                        {"TestSpansReachTheCollector", "TestNoAddressNoTracing", "TestTracesReachAnOTLPCollector"},
	"otlp.attrs":                          {"TestSpansReachTheCollector"},
	"otlp.headers":                        {"TestSpansReachTheCollector"},
	"otlp.insecure":                       {"TestSpansReachTheCollector"},
	"otlp.sample.ratio":                   {"TestSampleRatio"},
	"redis.compression":                   {"TestRedisCompression"},
	"redis.db":                            {"TestRedisDB"},
	"redis.key.prefix":                    {"TestRedisThroughSentinel"},
	"redis.sentinel.hosts":                {"TestRedisThroughSentinel"},
	"redis.sentinel.master":               {"TestRedisThroughSentinel"},
	"redis.server":                        {"TestRepoServerUsesRepositorySecrets", "TestComponentsRunAsTheManifestsSay", "TestRedis"},
	"repo.server":                         {"TestComponentsRunAsTheManifestsSay"},
	"reposerver.client.ca.path":           {"TestMutualTLS"},
	"reposerver.default.cache.expiration": {"TestRedis", "TestMemoryExpiryAndBound"},
	"reposerver.disable.helm.manifest.max.extracted.size": {"TestChartExtractedSizeBound"},
	"reposerver.disable.oci.manifest.max.extracted.size":  {"TestOCISources"},
	"reposerver.disable.tls":                              {"TestPlaintext"},
	"reposerver.enable.builtin.git.config":                {"TestBuiltinConfig"},
	"reposerver.enable.git.submodule":                     {"TestSubmodulesAreRendered", "TestCheckoutRecursive"},
	"reposerver.git.lsremote.parallelism.limit":           {"TestLsRemoteParallelism"},
	"reposerver.git.request.timeout":                      {"TestRequestTimeout"},
	"reposerver.grpc.max.size":                            {"TestMessageLimits"},
	"reposerver.helm.manifest.max.extracted.size":         {"TestChartExtractedSizeBound"},
	"reposerver.helm.user.agent":                          {"TestUserAgent"},
	"reposerver.include.hidden.directories":               {"TestHiddenDirectoriesThroughTheService", "TestHiddenDirectories"},
	"reposerver.listen.address":                           {"TestComponentsRunAsTheManifestsSay", "TestRepoServerUsesRepositorySecrets"},
	"reposerver.log.format":                               {"TestNewLogger"},
	"reposerver.log.level":                                {"TestNewLogger"},
	"reposerver.max.combined.directory.manifests.size":    {"TestDirectorySizeBoundThroughTheService", "TestDirectoryLimits"},
	"reposerver.metrics.listen.address":                   {"TestRepoServerUsesRepositorySecrets"},
	"reposerver.oci.layer.media.types":                    {"TestOCISources"},
	"reposerver.oci.manifest.max.extracted.size":          {"TestOCISources"},
	"reposerver.parallelism.limit":                        {"TestParallelismLimit", "TestRepoServerUsesRepositorySecrets"},
	"reposerver.plugin.tar.exclusions":                    {"TestRender"},
	"reposerver.plugin.use.manifest.generate.paths":       {"TestRender"},
	"reposerver.profile.enabled":                          {"TestRepoServerUsesRepositorySecrets", "TestPath"},
	"reposerver.streamed.manifest.max.extracted.size":     {"TestRenderFilesOverGRPC"},
	"reposerver.streamed.manifest.max.tar.size":           {"TestRenderFilesOverGRPC"},
	"reposerver.tls.ciphers":                              {"TestTLSPolicy"},
	"reposerver.tls.curvepreferences":                     {"TestTLSCurvePreferences"},
	"reposerver.tls.maxversion":                           {"TestTLSPolicy"},
	"reposerver.tls.minversion":                           {"TestTLSPolicy", "TestTLSMinimumVersion"},
	"server.api.content.types":                            {"TestAPIContentTypes"},
	"server.basehref":                                     {"TestUIBehindAProxyAndAnExpiredSession"},
	"server.content.security.policy":                      {"TestPageHeaders"},
	"server.dex.server":                                   {"TestSSOThroughBundledDex", "TestComponentsRunAsTheManifestsSay"},
	"server.dex.server.plaintext":                         {"TestSSOThroughBundledDex"},
	"server.dex.server.strict.tls":                        {"TestDexStrictTLS"},
	"server.disable.auth":                                 {"TestDisableAuth"},
	"server.disable.swagger.ui":                           {"TestSwaggerUIDisabled"},
	"server.enable.gzip":                                  {"TestGZipResponses"},
	"server.enable.proxy.extension":                       {"TestProxyExtensions", "TestProxyExtensionsOff"},
	"server.http.cookie.maxnumber":                        {"TestSessionCookies"},
	"server.insecure":                                     {"TestInsecureServesPlainHTTP"},
	"server.k8s.client.burst":                             {"TestEveryParamIsRead"},
	"server.k8s.client.max.idle.connections":              {"TestConnectionTuning", "TestFromEnv"},
	"server.k8s.client.qps":                               {"TestEveryParamIsRead"},
	"server.k8s.tcp.idle.timeout":                         {"TestConnectionTuning", "TestFromEnv"},
	"server.k8s.tcp.keepalive":                            {"TestFromEnv", "TestConnectionTuning"},
	"server.k8s.tcp.timeout":                              {"TestFromEnv", "TestConnectionTuning"},
	"server.k8s.tls.handshake.timeout":                    {"TestConnectionTuning", "TestFromEnv"},
	"server.k8sclient.retry.base.backoff":                 {"TestRetryStopsWithTheContext", "TestRetryRidesOutServerErrors", "TestFromEnv"},
	"server.k8sclient.retry.max":                          {"TestRetryRidesOutServerErrors", "TestClustersGetTheTransportTuning", "TestFromEnv"},
	"server.listen.address":                               {"TestComponentsRunAsTheManifestsSay"},
	"server.log.format":                                   {"TestNewLogger"},
	"server.log.level":                                    {"TestNewLogger"},
	"server.metrics.listen.address":                       {"TestRepoServerUsesRepositorySecrets"},
	"server.profile.enabled":                              {"TestRepoServerUsesRepositorySecrets", "TestPath"},
	"server.repo.server.ca.cert.path":                     {"TestClientTLS"},
	"server.repo.server.client.cert.key.path":             {"TestMutualTLS"},
	"server.repo.server.client.cert.path":                 {"TestMutualTLS"},
	"server.repo.server.plaintext":                        {"TestClientTLS", "TestPlaintext"},
	"server.repo.server.strict.tls":                       {"TestClientTLS", "TestStrictTLSWithoutCertificates"},
	"server.repo.server.timeout.seconds":                  {"TestCallTimeout"},
	"server.rootpath":                                     {"TestUIUnderRootPath"},
	"server.staticassets":                                 {"TestStaticAssetsDir"},
	"server.sync.replace.allowed":                         {"TestSyncReplaceDisallowed"},
	"server.tls.ciphers":                                  {"TestTLSPolicy"},
	"server.tls.curvepreferences":                         {"TestTLSCurvePreferences"},
	"server.tls.maxversion":                               {"TestTLSPolicy"},
	"server.tls.minversion":                               {"TestTLSMinimumVersion", "TestTLSPolicy"},
	"server.webhook.parallelism.limit":                    {"TestWebhookParallelism"},
	"server.webhook.refresh.workers":                      {"TestWebhookParallelism"},
	"server.x.frame.options":                              {"TestPageHeaders"},
}

// paramsTestedForWiring are the keys of paramTests whose tests show the
// value reaching its flag or option, but not yet what it changes. The
// list only shrinks.
var paramsTestedForWiring = []string{
	"applicationsetcontroller.concurrent.reconciliations.max",
	"applicationsetcontroller.enable.leader.election",
	"applicationsetcontroller.k8s.client.burst",
	"applicationsetcontroller.k8s.client.qps",
	"applicationsetcontroller.k8s.tcp.keepalive",
	"applicationsetcontroller.k8s.tcp.timeout",
	"applicationsetcontroller.wq.bucket.qps",
	"applicationsetcontroller.wq.bucket.size",
	"controller.k8s.client.burst",
	"controller.k8s.client.qps",
	"controller.k8s.tcp.keepalive",
	"controller.k8s.tcp.timeout",
	"controller.status.processors",
	"notificationscontroller.processors.count",
	"server.k8s.client.burst",
	"server.k8s.client.qps",
	"server.k8s.tcp.keepalive",
	"server.k8s.tcp.timeout",
	"server.webhook.refresh.workers",
}

// TestEveryActedOnParamHasTests: every argocd-cmd-params-cm key the
// install hands to a component that acts on it names tests that exist,
// and only those keys do.
func TestEveryActedOnParamHasTests(t *testing.T) {
	var actedOn []string
	for key := range mountedParams(t) {
		actedOn = append(actedOn, key)
	}
	for _, containers := range installContainers(t) {
		c := containers[0]
		if len(c.Command) == 0 {
			continue
		}
		program, args := Program(filepath.Base(c.Command[0]), append(slices.Clone(c.Command[1:]), c.Args...))
		if program != "capstan" || len(args) == 0 {
			continue
		}
		root, release := newRootAs("capstan")
		cmd, _, err := root.Find(args)
		if err != nil {
			release()
			t.Fatal(err)
		}
		noEffect := strings.Split(cmd.Annotations[component.NoEffectAnnotation], ",")
		for _, e := range c.Env {
			if ref := e.ValueFrom; ref != nil && ref.ConfigMapKeyRef != nil && ref.ConfigMapKeyRef.Name == settings.CmdParamsName &&
				!slices.Contains(noEffect, e.Name) {
				actedOn = append(actedOn, ref.ConfigMapKeyRef.Key)
			}
		}
		release()
	}
	slices.Sort(actedOn)
	keytests.Check(t, filepath.Join("..", "..", ".."), slices.Compact(actedOn), paramTests, paramsTestedForWiring)
}
