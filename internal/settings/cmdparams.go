package settings

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CmdParamsName is the ConfigMap of the components' command-line
// parameters, which the install's manifests hand to each component as
// environment variables.
const CmdParamsName = "argocd-cmd-params-cm"

// cmdParamKeys are the argocd-cmd-params-cm keys Argo CD documents (its
// example argocd-cmd-params-cm.yaml) and its install manifests read. Each
// reaches a component through the variable Argo CD's manifests give it;
// whether it changes what Capstan does is the component's to say (it logs
// the ones that change nothing).
var cmdParamKeys = []string{
	"application.namespaces",
	// New in Argo CD 3.6.
	"applicationsetcontroller.wq.backoff.factor", "applicationsetcontroller.wq.basedelay.ns",
	"applicationsetcontroller.wq.bucket.qps", "applicationsetcontroller.wq.bucket.size",
	"applicationsetcontroller.wq.cooldown.ns", "applicationsetcontroller.wq.maxdelay.ns",
	"commitserver.signing.key.passphrase.file", "commitserver.signing.key.path",
	"controller.metrics.application.conditions", "controller.metrics.application.labels",
	"controller.metrics.cluster.labels", "otlp.sample.ratio", "redis.sentinel.hosts", "redis.sentinel.master",
	"server.disable.swagger.ui", "redis.key.prefix", "server.tls.curvepreferences", "reposerver.tls.curvepreferences",
	"applicationsetcontroller.allowed.scm.providers", "applicationsetcontroller.concurrent.reconciliations.max",
	"applicationsetcontroller.debug", "applicationsetcontroller.dryrun", "applicationsetcontroller.enable.git.submodule",
	"applicationsetcontroller.enable.github.api.metrics", "applicationsetcontroller.enable.leader.election",
	"applicationsetcontroller.enable.new.git.file.globbing", "applicationsetcontroller.enable.policy.override",
	"applicationsetcontroller.enable.progressive.syncs", "applicationsetcontroller.enable.scm.providers",
	"applicationsetcontroller.enable.tokenref.strict.mode", "applicationsetcontroller.global.preserved.annotations",
	"applicationsetcontroller.global.preserved.labels", "applicationsetcontroller.grpc.enable.txt.service.config",
	"applicationsetcontroller.k8s.client.burst", "applicationsetcontroller.k8s.client.max.idle.connections",
	"applicationsetcontroller.k8s.client.qps", "applicationsetcontroller.k8s.tcp.idle.timeout",
	"applicationsetcontroller.k8s.tcp.keepalive", "applicationsetcontroller.k8s.tcp.timeout",
	"applicationsetcontroller.k8s.tls.handshake.timeout", "applicationsetcontroller.log.format",
	"applicationsetcontroller.log.level", "applicationsetcontroller.namespaces", "applicationsetcontroller.policy",
	"applicationsetcontroller.profile.enabled", "applicationsetcontroller.repo.server.ca.cert.path",
	"applicationsetcontroller.repo.server.client.cert.key.path", "applicationsetcontroller.repo.server.client.cert.path",
	"applicationsetcontroller.repo.server.plaintext", "applicationsetcontroller.repo.server.strict.tls",
	"applicationsetcontroller.repo.server.timeout.seconds", "applicationsetcontroller.requeue.after",
	"applicationsetcontroller.scm.root.ca.path", "applicationsetcontroller.status.max.resources.count",
	"applicationsetcontroller.webhook.parallelism.limit",
	"commit.server",
	"commitserver.grpc.enable.txt.service.config", "commitserver.listen.address", "commitserver.log.format",
	"commitserver.log.level", "commitserver.metrics.listen.address",
	"controller.app.state.cache.expiration", "controller.cluster.cache.batch.events.processing",
	"controller.cluster.cache.events.processing.interval", "controller.default.cache.expiration",
	"controller.diff.server.side", "controller.grpc.enable.txt.service.config", "controller.hydration.processors",
	"controller.ignore.normalizer.jq.timeout", "controller.k8s.client.burst",
	"controller.k8s.client.max.idle.connections", "controller.k8s.client.qps", "controller.k8s.tcp.idle.timeout",
	"controller.k8s.tcp.keepalive", "controller.k8s.tcp.timeout", "controller.k8s.tls.handshake.timeout",
	"controller.k8sclient.retry.base.backoff", "controller.k8sclient.retry.max", "controller.kubectl.parallelism.limit",
	"controller.log.format", "controller.log.level", "controller.metrics.cache.expiration",
	"controller.operation.processors", "controller.profile.enabled", "controller.repo.error.grace.period.seconds",
	"controller.repo.server.ca.cert.path", "controller.repo.server.client.cert.key.path",
	"controller.repo.server.client.cert.path", "controller.repo.server.plaintext", "controller.repo.server.strict.tls",
	"controller.repo.server.timeout.seconds", "controller.resource.health.persist",
	"controller.self.heal.backoff.cap.seconds", "controller.self.heal.backoff.cooldown.seconds",
	"controller.self.heal.backoff.factor", "controller.self.heal.backoff.timeout.seconds",
	"controller.self.heal.timeout.seconds", "controller.sharding.algorithm", "controller.status.processors",
	"controller.sync.timeout.seconds", "controller.sync.wave.delay.seconds",
	"dexserver.connector.failure.continue", "dexserver.disable.tls", "dexserver.log.format", "dexserver.log.level",
	"hydrator.enabled",
	"log.format.timestamp",
	"notificationscontroller.log.format", "notificationscontroller.log.level",
	"notificationscontroller.processors.count", "notificationscontroller.repo.server.ca.cert.path",
	"notificationscontroller.repo.server.client.cert.key.path", "notificationscontroller.repo.server.client.cert.path",
	"notificationscontroller.repo.server.plaintext", "notificationscontroller.selfservice.enabled",
	"otlp.address", "otlp.attrs", "otlp.headers", "otlp.insecure",
	"redis.compression", "redis.db", "redis.server",
	"repo.server",
	"reposerver.allow.oob.symlinks", "reposerver.client.ca.path", "reposerver.default.cache.expiration",
	"reposerver.disable.helm.manifest.max.extracted.size", "reposerver.disable.oci.manifest.max.extracted.size",
	"reposerver.disable.tls", "reposerver.enable.builtin.git.config", "reposerver.enable.git.submodule",
	"reposerver.git.lsremote.parallelism.limit", "reposerver.git.request.timeout",
	"reposerver.grpc.enable.txt.service.config", "reposerver.grpc.max.size",
	"reposerver.helm.manifest.max.extracted.size", "reposerver.helm.user.agent", "reposerver.include.hidden.directories",
	"reposerver.listen.address", "reposerver.log.format", "reposerver.log.level",
	"reposerver.max.combined.directory.manifests.size", "reposerver.metrics.listen.address",
	"reposerver.oci.layer.media.types", "reposerver.oci.manifest.max.extracted.size", "reposerver.parallelism.limit",
	"reposerver.plugin.tar.exclusions", "reposerver.plugin.use.manifest.generate.paths", "reposerver.profile.enabled",
	"reposerver.repo.cache.expiration", "reposerver.revision.cache.lock.timeout",
	"reposerver.streamed.manifest.max.extracted.size", "reposerver.streamed.manifest.max.tar.size",
	"reposerver.tls.ciphers", "reposerver.tls.maxversion", "reposerver.tls.minversion",
	"server.api.content.types", "server.app.state.cache.expiration", "server.basehref",
	"server.connection.status.cache.expiration", "server.content.security.policy", "server.default.cache.expiration",
	"server.dex.server", "server.dex.server.plaintext", "server.dex.server.strict.tls", "server.disable.auth",
	"server.enable.gzip", "server.enable.proxy.extension", "server.glob.cache.size",
	"server.grpc.enable.txt.service.config", "server.http.cookie.maxnumber", "server.insecure",
	"server.k8s.client.burst", "server.k8s.client.max.idle.connections", "server.k8s.client.qps",
	"server.k8s.tcp.idle.timeout", "server.k8s.tcp.keepalive", "server.k8s.tcp.timeout",
	"server.k8s.tls.handshake.timeout", "server.k8sclient.retry.base.backoff", "server.k8sclient.retry.max",
	"server.listen.address", "server.log.format", "server.log.level", "server.metrics.listen.address",
	"server.oidc.cache.expiration", "server.profile.enabled", "server.repo.server.ca.cert.path",
	"server.repo.server.client.cert.key.path", "server.repo.server.client.cert.path", "server.repo.server.plaintext",
	"server.repo.server.strict.tls", "server.repo.server.timeout.seconds", "server.rootpath", "server.staticassets",
	"server.sync.replace.allowed", "server.tls.ciphers", "server.tls.maxversion", "server.tls.minversion",
	"server.webhook.parallelism.limit", "server.webhook.refresh.workers", "server.x.frame.options",
}

// unreadCmdParams are documented keys no Capstan component reads, each
// with why: the install hands them to none, and the controller logs each
// one set.
var unreadCmdParams = map[string]string{
	"commitserver.listen.address":                 noCommitServer,
	"commitserver.log.format":                     noCommitServer,
	"commitserver.log.level":                      noCommitServer,
	"commitserver.metrics.listen.address":         noCommitServer,
	"commitserver.grpc.enable.txt.service.config": noCommitServer,
}

const (
	noCommitServer = "Capstan has no commit server: the application controller writes the hydrator's commits itself"
)

// UnreadCmdParams are the documented argocd-cmd-params-cm keys no Capstan
// component reads, each with why. Sorted by key.
func UnreadCmdParams() []KeyReason {
	var out []KeyReason
	for _, k := range sortedKeys(unreadCmdParams) {
		out = append(out, KeyReason{Key: k, Reason: unreadCmdParams[k]})
	}
	return out
}

// CmdParams is argocd-cmd-params-cm as read.
type CmdParams struct {
	Data map[string]string
	// Version is the ConfigMap's resourceVersion; empty when it is absent.
	Version string
}

// LoadCmdParams reads argocd-cmd-params-cm from namespace; an absent
// ConfigMap reads as empty.
func LoadCmdParams(ctx context.Context, c client.Reader, namespace string) (*CmdParams, error) {
	var cm corev1.ConfigMap
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: CmdParamsName}, &cm)
	if apierrors.IsNotFound(err) {
		return &CmdParams{Data: map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return &CmdParams{Data: cm.Data, Version: cm.ResourceVersion}, nil
}

// UnreadKeys are the keys set that Argo CD documents but no Capstan
// component reads, each with why. Sorted by key.
func (p *CmdParams) UnreadKeys() []KeyReason {
	var out []KeyReason
	for _, k := range sortedKeys(p.Data) {
		if why, ok := unreadCmdParams[k]; ok {
			out = append(out, KeyReason{Key: k, Reason: why})
		}
	}
	return out
}

// UnknownKeys are the keys Argo CD does not document: most often a
// misspelt one, which does nothing. Sorted.
func (p *CmdParams) UnknownKeys() []string {
	var out []string
	for _, k := range sortedKeys(p.Data) {
		if !slices.Contains(cmdParamKeys, k) {
			out = append(out, k)
		}
	}
	return out
}
