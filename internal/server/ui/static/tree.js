// The resource tree of an application, drawn as Argo CD draws it: the
// Application at the left, each resource to the right of its parents
// (a Pod right of its ReplicaSet right of its Deployment), boxes with the
// kind's icon and the resource's health and sync joined by edges. The DOM
// is nested lists, a tree to a screen reader, laid out by the style sheet
// as a graph; filters hide what does not match but keep the way to what
// does.

import { appRel, h, link, resourceKey, statusBadge } from './core.js';
import { kindIcon } from './icons.js';

// groupAbove is how many siblings of one kind a parent shows before
// grouping them in one box (with grouping on).
const groupAbove = 3;

// tree draws nodes (the resource tree's, sync statuses added) under the
// Application app; orphans are the project's orphaned resources, shown
// when asked. onSelect opens a resource.
export function tree(app, nodes, orphans, onSelect) {
  const prefs = treePrefs();
  const view = { prefs, nodes, orphans, onSelect, app };
  const box = h('div', { class: 'graph-wrap' });
  const draw = () => box.replaceChildren(filterBar(view, draw), graph(view));
  draw();
  return box;
}

// treePrefs are the tree's display choices, kept across pages as Argo
// CD keeps them.
function treePrefs() {
  let p = {};
  try {
    p = JSON.parse(localStorage.getItem('capstan.tree') || '{}');
  } catch (e) {
    p = {};
  }
  return { kinds: p.kinds || [], sync: p.sync || '', health: p.health || '', name: '', group: !!p.group, orphans: !!p.orphans };
}

function savePrefs(p) {
  localStorage.setItem('capstan.tree', JSON.stringify({ kinds: p.kinds, sync: p.sync, health: p.health, group: p.group, orphans: p.orphans }));
}

// filterBar offers the filters: name, kinds, sync and health status,
// orphaned resources and grouping.
function filterBar(view, draw) {
  const p = view.prefs;
  const all = view.nodes.concat(p.orphans ? view.orphans : []);
  const kinds = [...new Set(all.map((n) => n.kind))].sort();
  const values = (f) => [...new Set(all.map(f).filter(Boolean))].sort();
  // Filters only hide and show nodes; orphans and grouping redraw.
  const change = (f) => (e) => { f(e.target); savePrefs(p); applyFilter(view); };
  const redraw = (f) => (e) => { f(e.target); savePrefs(p); draw(); };
  const select = (id, label, value, options, set) => h('label', { class: 'facet' }, label,
    h('select', { id, onchange: change((t) => set(t.value)) }, h('option', { value: '' }, 'All'),
      options.map((o) => h('option', { value: o, selected: o === value }, o))));
  const name = h('input', { id: 'tree-name', type: 'search', placeholder: 'Filter by name', 'aria-label': 'Filter resources by name', value: p.name });
  name.addEventListener('input', () => {
    p.name = name.value;
    applyFilter(view);
  });
  return h('div', { class: 'tree-filters', role: 'group', 'aria-label': 'Resource filters' }, name,
    h('label', { class: 'facet' }, 'Kinds',
      h('select', { id: 'tree-kinds', multiple: true, size: String(Math.min(4, Math.max(2, kinds.length))),
        onchange: change((t) => { p.kinds = [...t.selectedOptions].map((o) => o.value); }) },
      kinds.map((k) => h('option', { value: k, selected: p.kinds.includes(k) }, k)))),
    select('tree-sync', 'Sync status', p.sync, values((n) => n.sync), (v) => { p.sync = v; }),
    select('tree-health', 'Health status', p.health, values((n) => n.health && n.health.status), (v) => { p.health = v; }),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', id: 'tree-orphans', checked: p.orphans,
      onchange: redraw((t) => { p.orphans = t.checked; }) }), ` Orphaned resources (${view.orphans.length})`),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', id: 'tree-group', checked: p.group,
      onchange: redraw((t) => { p.group = t.checked; }) }), ' Group nodes'),
    h('button', { type: 'button', id: 'tree-clear', onclick: () => {
      Object.assign(p, { kinds: [], sync: '', health: '', name: '' });
      savePrefs(p);
      draw();
    } }, 'Clear filters'));
}

// matches tells whether node n passes the filters.
function matches(p, n) {
  if (p.kinds.length && !p.kinds.includes(n.kind)) return false;
  if (p.sync && n.sync !== p.sync) return false;
  if (p.health && (!n.health || n.health.status !== p.health)) return false;
  if (p.name && !n.name.toLowerCase().includes(p.name.toLowerCase())) return false;
  return true;
}

// graph lays out the nodes: the Application, its resources under it,
// each resource's children under it; the orphans under a box of their
// own.
function graph(view) {
  const { nodes, app, onSelect, prefs } = view;
  const byKey = new Map(nodes.map((n) => [resourceKey(n), n]));
  const children = new Map();
  const roots = [];
  for (const n of nodes) {
    const parents = (n.parentRefs || []).map(resourceKey).filter((k) => byKey.has(k));
    if (parents.length === 0) roots.push(n);
    for (const p of parents) {
      if (!children.has(p)) children.set(p, []);
      children.get(p).push(n);
    }
  }
  const byName = (a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name);
  const items = [];
  const draw = (n, seen) => {
    const k = resourceKey(n);
    if (seen.has(k)) return null;
    seen.add(k);
    const kids = groupKinds(prefs, (children.get(k) || []).sort(byName), (c) => draw(c, new Set(seen)));
    const li = h('li', { class: kids.length ? 'node' : 'node leaf', 'data-kind': n.kind, 'data-name': n.name },
      nodeBox(n, onSelect), kids.length ? h('ul', {}, kids) : '');
    items.push([li, n, 0]);
    return li;
  };
  const st = app.status || {};
  const top = groupKinds(prefs, roots.sort(byName), (n) => draw(n, new Set()));
  const orphans = prefs.orphans && view.orphans.length ? h('li', { class: 'node orphans' },
    h('div', { class: 'box group' }, h('span', { class: 'title' }, `Orphaned resources (${view.orphans.length})`)),
    h('ul', {}, view.orphans.slice().sort(byName).map((n) => draw({ ...n, orphaned: true }, new Set())))) : '';
  const list = h('ul', { id: 'tree', class: 'tree graph', 'aria-label': 'Resource tree' },
    h('li', { class: 'node root', 'data-kind': 'Application', 'data-name': app.metadata.name },
      nodeBox({ kind: 'Application', name: app.metadata.name, health: st.health, sync: st.sync && st.sync.status }),
      h('ul', {}, top, orphans)));
  view.items = items;
  const pane = h('div', { class: 'graph-pane', tabindex: '0', role: 'region', 'aria-label': 'Resource graph, scroll to pan' }, list);
  panByDragging(pane);
  applyFilter(view);
  return pane;
}

// groupKinds draws siblings, and with grouping on puts more than
// groupAbove of one kind in a box that shows them when opened.
function groupKinds(prefs, siblings, draw) {
  if (!prefs.group) return siblings.map(draw).filter(Boolean);
  const byKind = new Map();
  for (const n of siblings) {
    if (!byKind.has(n.kind)) byKind.set(n.kind, []);
    byKind.get(n.kind).push(n);
  }
  const out = [];
  for (const [kind, group] of byKind) {
    if (group.length <= groupAbove) {
      out.push(...group.map(draw).filter(Boolean));
      continue;
    }
    const drawn = group.map(draw).filter(Boolean);
    const inner = h('ul', { hidden: true }, drawn);
    const toggle = h('button', { type: 'button', class: 'linkish', 'aria-expanded': 'false', onclick: () => {
      inner.hidden = !inner.hidden;
      toggle.setAttribute('aria-expanded', String(!inner.hidden));
    } }, `${group.length} ${kind}s`);
    out.push(h('li', { class: 'node grouped', 'data-kind': kind, 'data-group': String(group.length) },
      h('div', { class: 'box group' }, kindIcon(kind), h('span', { class: 'title' }, toggle)), inner));
  }
  return out;
}

// nodeBox is one resource's box: kind icon, name (opening the resource),
// kind, and its health and sync.
export function nodeBox(n, onSelect) {
  const name = onSelect ? h('button', { type: 'button', class: 'linkish name', title: n.name, onclick: () => onSelect(n) }, n.name) :
    h('span', { class: 'name', title: n.name }, n.name);
  // An Application the app deploys (app of apps) links to its own page.
  const child = onSelect && n.kind === 'Application' && n.group === 'argoproj.io' ?
    link(appRel(n.namespace, n.name), 'Open', { class: 'open-app', 'aria-label': `Open application ${n.name}` }) : '';
  return h('div', { class: 'box' + (n.orphaned ? ' orphaned' : '') }, kindIcon(n.kind),
    h('span', { class: 'title' }, name, h('span', { class: 'kind' }, n.kind + (n.namespace ? ' · ' + n.namespace : '')), child),
    h('span', { class: 'marks' }, n.health && n.health.status ? statusBadge('health', n.health.status, true) : '',
      n.sync ? statusBadge('sync', n.sync, true) : ''));
}

// applyFilter hides the nodes that neither match nor lead to one that
// does, and dims those shown only to lead the way. The nodes are in
// post-order (children before parents), so one pass decides each.
function applyFilter(view) {
  const p = view.prefs;
  const on = !!(p.kinds.length || p.sync || p.health || p.name);
  const leads = new Set();
  for (const item of view.items || []) {
    const [li, n] = item;
    const match = on && matches(p, n);
    const keep = !on || match || leads.has(li);
    const state = (match ? 1 : 0) | (on && keep && !match ? 2 : 0) | (keep ? 0 : 4);
    if (state !== item[2]) { // only what changes is written: a 5,000-node graph stays quick
      li.classList.toggle('match', match);
      li.classList.toggle('dim', (state & 2) !== 0);
      li.hidden = !keep;
      item[2] = state;
    }
    if (keep && item[3] === undefined) item[3] = li.parentElement ? li.parentElement.closest('li') : null;
    if (keep && item[3]) leads.add(item[3]);
  }
}

// panByDragging pans the pane by dragging it with the mouse; the
// keyboard and wheel scroll it as any region.
export function panByDragging(pane) {
  let from = null;
  pane.addEventListener('pointerdown', (e) => {
    if (e.button !== 0 || e.target.closest('button, a, input, select')) return;
    from = { x: e.clientX, y: e.clientY, left: pane.scrollLeft, top: pane.scrollTop };
    pane.setPointerCapture(e.pointerId);
  });
  pane.addEventListener('pointermove', (e) => {
    if (!from) return;
    pane.scrollLeft = from.left - (e.clientX - from.x);
    pane.scrollTop = from.top - (e.clientY - from.y);
  });
  const stop = () => { from = null; };
  pane.addEventListener('pointerup', stop);
  pane.addEventListener('pointercancel', stop);
}

// withSync adds each managed resource's sync status to its tree node.
export function withSync(nodes, resources) {
  const status = new Map(resources.map((r) => [resourceKey(r), r.status]));
  return nodes.map((n) => status.has(resourceKey(n)) ? { ...n, sync: status.get(resourceKey(n)) } : n);
}
