package health

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestCustomResourceHealth: each widely used custom resource family in
// each of its states, as its project documents its status.
func TestCustomResourceHealth(t *testing.T) {
	const (
		H = v1alpha1.HealthStatusHealthy
		P = v1alpha1.HealthStatusProgressing
		D = v1alpha1.HealthStatusDegraded
		S = v1alpha1.HealthStatusSuspended
	)
	ready := func(status, reason string) string {
		return "status: {conditions: [{type: Ready, status: '" + status + "', reason: " + reason + ", message: m}]}"
	}
	tests := []struct {
		name string
		obj  string
		want v1alpha1.HealthStatusCode
	}{
		// Argo Rollouts
		{"rollout healthy", "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {generation: 2}, status: {observedGeneration: '2', phase: Healthy}}", H},
		{"rollout progressing", "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {generation: 2}, status: {observedGeneration: '2', phase: Progressing}}", P},
		{"rollout spec not seen", "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {generation: 3}, status: {observedGeneration: '2', phase: Healthy}}", P},
		{"rollout paused", "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {generation: 2}, status: {observedGeneration: '2', phase: Paused}}", S},
		{"rollout degraded", "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {generation: 2}, status: {observedGeneration: '2', phase: Degraded, message: aborted}}", D},
		// Argo Workflows
		{"workflow running", "{apiVersion: argoproj.io/v1alpha1, kind: Workflow, status: {phase: Running}}", P},
		{"workflow succeeded", "{apiVersion: argoproj.io/v1alpha1, kind: Workflow, status: {phase: Succeeded}}", H},
		{"workflow failed", "{apiVersion: argoproj.io/v1alpha1, kind: Workflow, status: {phase: Failed}}", D},
		{"workflow error", "{apiVersion: argoproj.io/v1alpha1, kind: Workflow, status: {phase: Error}}", D},
		// cert-manager
		{"certificate ready", "{apiVersion: cert-manager.io/v1, kind: Certificate, " + ready("True", "Ready") + "}", H},
		{"certificate issuing", "{apiVersion: cert-manager.io/v1, kind: Certificate, status: {conditions: [{type: Ready, status: 'False', reason: DoesNotExist}, {type: Issuing, status: 'True'}]}}", P},
		{"certificate failed", "{apiVersion: cert-manager.io/v1, kind: Certificate, " + ready("False", "Failed") + "}", D},
		{"issuer not yet", "{apiVersion: cert-manager.io/v1, kind: ClusterIssuer}", P},
		// Crossplane
		{"managed resource ready", "{apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, status: {conditions: [{type: Synced, status: 'True'}, {type: Ready, status: 'True'}]}}", H},
		{"managed resource creating", "{apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, status: {conditions: [{type: Synced, status: 'True'}, {type: Ready, status: 'False', reason: Creating}]}}", P},
		{"managed resource not synced", "{apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, status: {conditions: [{type: Synced, status: 'False', reason: ReconcileError, message: denied}]}}", D},
		{"provider unhealthy", "{apiVersion: pkg.crossplane.io/v1, kind: Provider, status: {conditions: [{type: Installed, status: 'True'}, {type: Healthy, status: 'False'}]}}", D},
		{"composition", "{apiVersion: apiextensions.crossplane.io/v1, kind: Composition, spec: {}}", H},
		// External Secrets
		{"external secret synced", "{apiVersion: external-secrets.io/v1beta1, kind: ExternalSecret, " + ready("True", "SecretSynced") + "}", H},
		{"external secret error", "{apiVersion: external-secrets.io/v1beta1, kind: ExternalSecret, " + ready("False", "SecretSyncedError") + "}", D},
		{"secret store pending", "{apiVersion: external-secrets.io/v1beta1, kind: SecretStore}", P},
		// KEDA
		{"scaled object ready", "{apiVersion: keda.sh/v1alpha1, kind: ScaledObject, " + ready("True", "ScaledObjectReady") + "}", H},
		{"scaled object failing", "{apiVersion: keda.sh/v1alpha1, kind: ScaledObject, " + ready("False", "ScaledObjectCheckFailed") + "}", D},
		{"scaled object paused", "{apiVersion: keda.sh/v1alpha1, kind: ScaledObject, metadata: {annotations: {autoscaling.keda.sh/paused: 'true'}}, " + ready("True", "x") + "}", S},
		// Flux
		{"kustomization ready", "{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {generation: 1}, status: {observedGeneration: 1, conditions: [{type: Ready, status: 'True'}]}}", H},
		{"kustomization reconciling", "{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, status: {conditions: [{type: Reconciling, status: 'True'}, {type: Ready, status: Unknown}]}}", P},
		{"helm release stalled", "{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, status: {conditions: [{type: Stalled, status: 'True', message: bad values}]}}", D},
		{"helm release failed", "{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, " + ready("False", "UpgradeFailed") + "}", D},
		{"git repository suspended", "{apiVersion: source.toolkit.fluxcd.io/v1, kind: GitRepository, spec: {suspend: true}}", S},
		{"git repository spec not seen", "{apiVersion: source.toolkit.fluxcd.io/v1, kind: GitRepository, metadata: {generation: 2}, status: {observedGeneration: 1, conditions: [{type: Ready, status: 'True'}]}}", P},
		// Istio
		{"virtual service", "{apiVersion: networking.istio.io/v1, kind: VirtualService, spec: {}}", H},
		{"virtual service invalid", "{apiVersion: networking.istio.io/v1, kind: VirtualService, status: {validationMessages: [{level: ERROR, type: {code: IST0101, name: ReferencedResourceNotFound}}]}}", D},
		{"virtual service not yet pushed", "{apiVersion: networking.istio.io/v1, kind: VirtualService, status: {conditions: [{type: Reconciled, status: 'False'}]}}", P},
		// Knative
		{"knative service ready", "{apiVersion: serving.knative.dev/v1, kind: Service, " + ready("True", "x") + "}", H},
		{"knative service deploying", "{apiVersion: serving.knative.dev/v1, kind: Service, status: {conditions: [{type: Ready, status: Unknown, reason: Deploying}]}}", P},
		{"knative service failed", "{apiVersion: serving.knative.dev/v1, kind: Service, " + ready("False", "RevisionFailed") + "}", D},
		// Prometheus operator
		{"prometheus available", "{apiVersion: monitoring.coreos.com/v1, kind: Prometheus, status: {conditions: [{type: Available, status: 'True'}, {type: Reconciled, status: 'True'}]}}", H},
		{"prometheus degraded", "{apiVersion: monitoring.coreos.com/v1, kind: Prometheus, status: {conditions: [{type: Available, status: Degraded}, {type: Reconciled, status: 'True'}]}}", D},
		{"alertmanager not reconciled", "{apiVersion: monitoring.coreos.com/v1, kind: Alertmanager, status: {conditions: [{type: Reconciled, status: 'False', message: bad config}]}}", D},
		{"alertmanager starting", "{apiVersion: monitoring.coreos.com/v1, kind: Alertmanager}", P},
		{"service monitor", "{apiVersion: monitoring.coreos.com/v1, kind: ServiceMonitor, spec: {}}", H},
		// Strimzi
		{"kafka ready", "{apiVersion: kafka.strimzi.io/v1beta2, kind: Kafka, " + ready("True", "x") + "}", H},
		{"kafka topic not ready", "{apiVersion: kafka.strimzi.io/v1beta2, kind: KafkaTopic, " + ready("False", "KafkaError") + "}", D},
		{"kafka creating", "{apiVersion: kafka.strimzi.io/v1beta2, kind: Kafka, status: {conditions: [{type: NotReady, status: 'True'}]}}", P},
		// Velero
		{"backup in progress", "{apiVersion: velero.io/v1, kind: Backup, status: {phase: InProgress}}", P},
		{"backup completed", "{apiVersion: velero.io/v1, kind: Backup, status: {phase: Completed}}", H},
		{"backup partially failed", "{apiVersion: velero.io/v1, kind: Backup, status: {phase: PartiallyFailed}}", D},
		{"restore failed", "{apiVersion: velero.io/v1, kind: Restore, status: {phase: Failed}}", D},
		{"schedule paused", "{apiVersion: velero.io/v1, kind: Schedule, status: {phase: Paused}}", S},
		// Cluster API
		{"cluster ready", "{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, status: {phase: Provisioned, conditions: [{type: Ready, status: 'True'}]}}", H},
		{"cluster provisioning", "{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, status: {phase: Provisioning, conditions: [{type: Ready, status: 'False', reason: WaitingForInfrastructure}]}}", P},
		{"cluster failing", "{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, status: {conditions: [{type: Ready, status: 'False', severity: Error, reason: InfrastructureFailed}]}}", D},
		{"machine failed", "{apiVersion: cluster.x-k8s.io/v1beta1, kind: Machine, status: {phase: Failed, failureMessage: no capacity}}", D},
		{"cluster paused", "{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, spec: {paused: true}}", S},
		// Tekton
		{"pipeline run running", "{apiVersion: tekton.dev/v1, kind: PipelineRun, status: {conditions: [{type: Succeeded, status: Unknown, reason: Running}]}}", P},
		{"pipeline run succeeded", "{apiVersion: tekton.dev/v1, kind: PipelineRun, status: {conditions: [{type: Succeeded, status: 'True'}]}}", H},
		{"task run failed", "{apiVersion: tekton.dev/v1, kind: TaskRun, status: {conditions: [{type: Succeeded, status: 'False', reason: Failed}]}}", D},
		{"pipeline run pending", "{apiVersion: tekton.dev/v1, kind: PipelineRun, status: {conditions: [{type: Succeeded, status: Unknown, reason: PipelineRunPending}]}}", S},
		{"pipeline", "{apiVersion: tekton.dev/v1, kind: Pipeline, spec: {}}", H},
	}
	checker, err := NewChecker(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// As the API server's JSON decodes: whole numbers are int64.
			data, err := yaml.YAMLToJSON([]byte(tt.obj))
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			obj.SetName("x")
			got, err := checker.Check(obj)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.want {
				t.Errorf("%s (%q), want %s", got.Status, got.Message, tt.want)
			}
		})
	}
}
