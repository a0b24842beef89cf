local helpers = import 'helpers.libsonnet';
function(replicas=1, prefix='app') [
  helpers.configMap(prefix + '-config', { env: std.extVar('env'), app: std.extVar('app') }),
  [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: prefix },
      spec: { replicas: replicas },
    },
  ],
]
