// Icons drawn as inline SVG (the page's content policy allows no outside
// images): a kind icon per common Kubernetes kind, as the community's
// icon set marks them (a heptagon with the kind's short name), and the
// status glyphs every page shares.

const svgNS = 'http://www.w3.org/2000/svg';

// kinds maps a kind to its short name and family (the icon's colour).
const kinds = {
  Application: ['app', 'argo'], ApplicationSet: ['appset', 'argo'], AppProject: ['proj', 'argo'],
  Deployment: ['deploy', 'workload'], ReplicaSet: ['rs', 'workload'], Pod: ['pod', 'workload'], StatefulSet: ['sts', 'workload'],
  DaemonSet: ['ds', 'workload'], Job: ['job', 'workload'], CronJob: ['cronjob', 'workload'], ReplicationController: ['rc', 'workload'],
  HorizontalPodAutoscaler: ['hpa', 'workload'], Rollout: ['rollout', 'workload'], PodDisruptionBudget: ['pdb', 'workload'],
  Service: ['svc', 'network'], Ingress: ['ing', 'network'], Endpoints: ['ep', 'network'], EndpointSlice: ['eps', 'network'],
  NetworkPolicy: ['netpol', 'network'], IngressClass: ['ingcls', 'network'], Gateway: ['gtw', 'network'], HTTPRoute: ['route', 'network'],
  ConfigMap: ['cm', 'config'], Secret: ['secret', 'config'], ServiceAccount: ['sa', 'rbac'],
  Role: ['role', 'rbac'], ClusterRole: ['c.role', 'rbac'], RoleBinding: ['rb', 'rbac'], ClusterRoleBinding: ['crb', 'rbac'],
  PersistentVolumeClaim: ['pvc', 'storage'], PersistentVolume: ['pv', 'storage'], StorageClass: ['sc', 'storage'],
  Namespace: ['ns', 'cluster'], Node: ['node', 'cluster'], CustomResourceDefinition: ['crd', 'cluster'],
  LimitRange: ['limits', 'cluster'], ResourceQuota: ['quota', 'cluster'],
  MutatingWebhookConfiguration: ['mwh', 'cluster'], ValidatingWebhookConfiguration: ['vwh', 'cluster'],
};

// shortName is the kind's short name: the community's, or the kind's
// capitals (a custom resource's).
function shortName(kind) {
  if (kinds[kind]) return kinds[kind][0];
  const caps = kind.replace(/[^A-Z]/g, '').toLowerCase();
  return (caps.length >= 2 ? caps : kind.slice(0, 4).toLowerCase()).slice(0, 6);
}

function svg(tag, attrs) {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

// heptagon is the outline of Kubernetes' icons, in a 40×40 box.
const heptagon = (() => {
  const pts = [];
  for (let i = 0; i < 7; i++) {
    const a = -Math.PI / 2 + i * 2 * Math.PI / 7;
    pts.push(`${(20 + 19 * Math.cos(a)).toFixed(1)},${(21 + 19 * Math.sin(a)).toFixed(1)}`);
  }
  return pts.join(' ');
})();

// kindIcon is the icon of kind, labelled by it for screen readers.
export function kindIcon(kind) {
  const family = (kinds[kind] || [null, 'custom'])[1];
  const name = shortName(kind);
  const icon = svg('svg', { viewBox: '0 0 40 40', class: 'kind-icon ' + family, role: 'img', 'aria-label': kind });
  icon.append(svg('polygon', { points: heptagon }));
  const text = svg('text', { x: '20', y: '25', 'text-anchor': 'middle', 'font-size': name.length > 4 ? '8' : '10' });
  text.textContent = name;
  icon.append(text);
  return icon;
}

// glyphs are the status marks beside status names on every page.
const glyphs = {
  healthy: '♥', degraded: '✕', progressing: '↻', suspended: '❚❚', missing: '?', unknown: '?',
  synced: '✓', outofsync: '↑', succeeded: '✓', failed: '✕', error: '✕', running: '↻', terminating: '↻',
  successful: '✓', pending: '…', waiting: '…',
};

// statusGlyph is the mark of a status ('' for one without).
export function statusGlyph(status) {
  return glyphs[String(status).toLowerCase()] || '';
}
