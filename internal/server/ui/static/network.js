// The network view of an application, as Argo CD's: the way traffic
// comes in, from the addresses and URLs users reach, through Ingresses
// to the Services they route to, and from each Service to the Pods its
// selector picks, read from the resource tree's networking information.

import { h, resourceKey } from './core.js';
import { nodeBox, panByDragging } from './tree.js';

// refKey names a resource whatever its version.
function refKey(r) {
  return `${r.group || ''}/${r.kind}/${r.namespace || ''}/${r.name}`;
}

// selects tells whether a Service's selector picks a Pod's labels.
function selects(selector, labels) {
  const keys = Object.keys(selector || {});
  return keys.length > 0 && keys.every((k) => (labels || {})[k] === selector[k]);
}

// network draws the view of the tree's nodes; onSelect opens a resource.
export function network(nodes, onSelect) {
  const byKey = new Map(nodes.map((n) => [refKey(n), n]));
  const pods = nodes.filter((n) => n.kind === 'Pod' && !n.group);
  const services = nodes.filter((n) => n.kind === 'Service' && !n.group);
  const ingresses = nodes.filter((n) => n.kind === 'Ingress');
  const info = (n) => n.networkingInfo || {};
  const routed = new Set();
  const podItem = (p) => h('li', { class: 'node', 'data-kind': 'Pod', 'data-name': p.name }, nodeBox(p, onSelect));
  const serviceItem = (s) => {
    const picked = pods.filter((p) => p.namespace === s.namespace && selects(info(s).targetLabels, info(p).labels));
    return h('li', { class: 'node', 'data-kind': 'Service', 'data-name': s.name }, withAddresses(nodeBox(s, onSelect), info(s)),
      picked.length ? h('ul', {}, picked.map(podItem)) : '');
  };
  const ingressItems = ingresses.map((ing) => {
    const targets = (info(ing).targetRefs || []).map((r) => byKey.get(refKey({ ...r, group: r.group || '' }))).filter(Boolean);
    targets.forEach((s) => routed.add(resourceKey(s)));
    return h('li', { class: 'node', 'data-kind': 'Ingress', 'data-name': ing.name }, withAddresses(nodeBox(ing, onSelect), info(ing)),
      targets.length ? h('ul', {}, targets.map(serviceItem)) : '');
  });
  const direct = services.filter((s) => !routed.has(resourceKey(s))).map(serviceItem);
  if (ingressItems.length + direct.length === 0) {
    return h('p', { id: 'network', class: 'empty' }, 'This application has no Services or Ingresses.');
  }
  const pane = h('div', { class: 'graph-pane', tabindex: '0', role: 'region', 'aria-label': 'Network, scroll to pan' },
    h('ul', { id: 'network', class: 'graph', 'aria-label': 'Network' }, ingressItems, direct));
  panByDragging(pane);
  return h('div', { class: 'graph-wrap' }, pane);
}

// withAddresses adds to a box the load balancers' addresses and the URLs
// users reach the resource at (a link annotation's "title|URL" shown by
// its title).
function withAddresses(box, info) {
  const addresses = (info.ingress || []).map((i) => i.hostname || i.ip).filter(Boolean);
  const urls = info.externalURLs || [];
  if (addresses.length + urls.length === 0) return box;
  box.append(h('ul', { class: 'addresses plain' },
    addresses.map((a) => h('li', { class: 'address' }, a)),
    urls.map((u) => {
      const [title, href] = u.includes('|') ? u.split(/\|(.*)/s) : [u, u];
      return /^https?:\/\//.test(href) ? h('li', {}, h('a', { href, target: '_blank', rel: 'noopener noreferrer', class: 'external' }, title)) : '';
    })));
  return box;
}
