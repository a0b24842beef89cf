// The pods view of an application, as Argo CD's: its Pods grouped by the
// node they run on (with the node's system and the CPU and memory the
// app's Pods request of it), by their parent, or by the app's resource
// they come from, each Pod a tile coloured by its health.

import { h, resourceKey, statusBadge } from './core.js';

// groupings are the ways the view groups Pods, by the URL's podSortBy
// as Argo CD names them.
const groupings = { node: 'Node', parentResource: 'Parent resource', topLevelResource: 'Top-level resource' };

// infoOf reads a node's info item by name.
function infoOf(n, name) {
  const item = (n.info || []).find((i) => i.name === name);
  return item ? item.value : '';
}

// pods draws the view: hosts are the tree's, by is the grouping, onBy
// changes it, onSelect opens a Pod.
export function pods(nodes, hosts, by, onBy, onSelect) {
  by = groupings[by] ? by : 'node';
  const byKey = new Map(nodes.map((n) => [resourceKey(n), n]));
  const parentOf = (n) => (n.parentRefs || []).map((r) => byKey.get(resourceKey(r))).find(Boolean);
  const topOf = (n) => {
    for (let p = parentOf(n), seen = 0; p && seen < 20; p = parentOf(p), seen++) n = p;
    return n;
  };
  const groups = new Map();
  for (const p of nodes.filter((n) => n.kind === 'Pod' && !n.group)) {
    let name;
    if (by === 'node') name = infoOf(p, 'Node') || 'Unscheduled';
    else {
      const g = by === 'parentResource' ? parentOf(p) : topOf(p);
      name = g && g !== p ? `${g.kind} ${g.name}` : 'No parent';
    }
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(p);
  }
  const hostByName = new Map((hosts || []).map((x) => [x.name, x]));
  const choose = h('label', { class: 'facet inline' }, 'Group by ',
    h('select', { id: 'pods-by', onchange: (e) => onBy(e.target.value) },
      Object.entries(groupings).map(([k, v]) => h('option', { value: k, selected: k === by }, v))));
  const sections = [...groups.keys()].sort().map((name) => h('section', { class: 'pod-group', 'data-group': name },
    h('h3', {}, name), by === 'node' ? hostSummary(hostByName.get(name)) : '',
    h('div', { class: 'pod-tiles' }, groups.get(name).sort((a, b) => a.name.localeCompare(b.name)).map((p) => podTile(p, onSelect)))));
  return h('div', { id: 'pods', class: 'pods-view' }, h('div', { class: 'toolbar' }, choose),
    sections.length ? sections : h('p', { class: 'empty' }, 'This application has no Pods.'));
}

// hostSummary shows a node's system, the labels argocd-cm's
// application.allowedNodeLabels lets through, and how much of its CPU and
// memory the app's Pods request.
function hostSummary(host) {
  if (!host) return '';
  const sys = host.systemInfo || {};
  const bars = (host.resourcesInfo || []).map((r) => {
    const share = r.capacity ? Math.min(100, Math.round(100 * (r.requestedByApp || 0) / r.capacity)) : 0;
    const amount = r.resourceName === 'cpu' ? `${((r.requestedByApp || 0) / 1000).toFixed(2)} of ${(r.capacity / 1000).toFixed(0)} cores` :
      `${mebibytes(r.requestedByApp || 0)} of ${mebibytes(r.capacity)}`;
    return h('div', { class: 'usage', 'data-resource': r.resourceName }, h('span', {}, `${r.resourceName === 'cpu' ? 'CPU' : 'Memory'}: ${amount} requested`),
      h('meter', { min: '0', max: '100', value: String(share), 'aria-label': `${r.resourceName} requested, percent of capacity` }));
  });
  const labels = Object.entries(host.labels || {}).map(([k, v]) => `${k}=${v}`).join(', ');
  return h('div', { class: 'host' }, h('p', { class: 'count' }, [sys.osImage, sys.kernelVersion, sys.kubeletVersion && 'kubelet ' + sys.kubeletVersion].filter(Boolean).join(' · ')),
    labels ? h('p', { class: 'count host-labels' }, labels) : '', bars);
}

function mebibytes(bytes) {
  return `${Math.round(bytes / 1048576)} MiB`;
}

// podTile is one Pod: its name, status, containers ready and restarts.
function podTile(p, onSelect) {
  const health = (p.health && p.health.status) || 'Unknown';
  const restarts = infoOf(p, 'Restart Count');
  return h('button', { type: 'button', class: 'pod ' + health.toLowerCase(), 'data-name': p.name, onclick: () => onSelect(p) },
    h('span', { class: 'name' }, p.name), statusBadge('health', health, true),
    h('span', { class: 'count' }, [infoOf(p, 'Status Reason'), infoOf(p, 'Containers') && `${infoOf(p, 'Containers')} ready`,
      restarts && `${restarts} restarts`].filter(Boolean).join(' · ')));
}
