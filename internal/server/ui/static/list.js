// The applications list: tiles, a table or a summary, Argo CD's filters
// (favourites, statuses, auto-sync, operation, project, cluster,
// namespace, repository, target revision, labels, annotations), actions
// on the selected apps, and live updates. Filtering and paging happen in
// the API, so the page stays small at any number of apps.

import { api, appRel, dialog, h, header, link, navigate, render, root, showError, statusBadge, watchApplications, warn } from './core.js';

const filterKeys = ['search', 'project', 'sync', 'health', 'cluster', 'namespace', 'repo', 'targetRevision', 'autoSync', 'operation', 'selector', 'annotation'];
const pageSize = 60;
const viewNames = { tiles: 'Tiles', list: 'List', summary: 'Summary' };

// favourites are the apps the user starred, kept in the browser as Argo
// CD keeps them.
const favourites = {
  key: (a) => `${a.namespace}/${a.name}`,
  all: () => {
    try {
      return new Set(JSON.parse(localStorage.getItem('capstan.favourites') || '[]'));
    } catch (e) {
      return new Set();
    }
  },
  toggle(a) {
    const all = this.all();
    if (all.has(this.key(a))) all.delete(this.key(a)); else all.add(this.key(a));
    localStorage.setItem('capstan.favourites', JSON.stringify([...all]));
  },
};

// selected are the apps chosen for an action, across redraws of the page;
// outcome says how the last action went until the selection changes.
const selected = new Map();
let outcome = '';

export async function renderApplications(user) {
  const params = new URLSearchParams(location.search);
  const view = viewNames[params.get('view')] ? params.get('view') : 'tiles';
  const query = new URLSearchParams();
  for (const k of filterKeys) for (const v of params.getAll(k)) query.append(k, v);
  const favouritesOnly = params.get('favourites') === 'true';
  if (favouritesOnly) {
    const names = [...favourites.all()].map((k) => k.slice(k.indexOf('/') + 1));
    for (const n of names.length ? names : ['\u0000none']) query.append('name', n);
  }
  query.set('offset', params.get('offset') || '0');
  query.set('limit', String(pageSize));
  const page = await api('api/v1/ui/applications?' + query);

  const set = (key, values) => {
    const next = new URLSearchParams(location.search);
    next.delete(key);
    next.delete('offset');
    for (const v of [].concat(values)) if (v) next.append(key, v);
    navigate('applications?' + next, true);
  };
  const filters = filterPanel(params, page, set, view);
  const items = page.items.map((a) => appCard(a, view));
  const offset = page.offset;
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('span', { id: 'total' }, page.total === 0 ? 'No applications' :
      `${offset + 1}–${offset + page.items.length} of ${page.total} applications`),
    offset > 0 ? h('button', { type: 'button', onclick: () => set('offset', String(Math.max(0, offset - pageSize))) }, 'Previous') : null,
    offset + page.items.length < page.total ? h('button', { type: 'button', onclick: () => set('offset', String(offset + pageSize)) }, 'Next') : null);

  const toggle = h('div', { class: 'views', role: 'group', 'aria-label': 'View' },
    Object.entries(viewNames).map(([v, label]) => h('button', { type: 'button', 'aria-pressed': String(v === view), id: 'view-' + v,
      onclick: () => set('view', v === 'tiles' ? '' : v) }, label)));
  const body = view === 'summary' ? summaryView(page) : h(view === 'list' ? 'table' : 'div', { id: 'apps', class: view }, view === 'list' ?
    [h('thead', {}, h('tr', {}, ['', 'Name', 'Project', 'Sync', 'Health', 'Repository', 'Destination'].map((c) => h('th', {}, c)))), h('tbody', {}, items)] :
    items);
  root.replaceChildren(header(user), h('div', { class: 'layout' }, filters,
    h('main', {}, h('div', { class: 'toolbar' }, h('h1', {}, 'Applications'),
      h('div', { class: 'actions' }, link('applications/new', 'New app', { class: 'button', id: 'new-app' }), toggle)),
    view === 'summary' ? '' : bulkBar(page), pager, body)));
  watchApplications(page.resourceVersion, () => render());
}

// filterPanel is the filters beside the list, each kept in the URL.
function filterPanel(params, page, set, view) {
  const search = h('input', { id: 'search', type: 'search', placeholder: 'Search by name', 'aria-label': 'Search applications by name',
    value: params.get('search') || '' });
  let timer;
  search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => set('search', search.value), 300); });
  const select = (key, label, values) => h('label', { class: 'facet' }, label,
    h('select', { id: 'filter-' + key, 'aria-label': label, onchange: (e) => set(key, e.target.value) },
      h('option', { value: '' }, 'All'),
      (values || []).map((v) => h('option', { value: v, selected: params.get(key) === v }, v))));
  const boxes = (key, label, counts, all = []) => h('fieldset', { class: 'statuses', id: 'filter-' + key }, h('legend', {}, label),
    [...new Set([...all, ...Object.keys(counts || {})])].sort().map((s) => h('label', {},
      h('input', { type: 'checkbox', value: s, checked: params.getAll(key).includes(s), onchange: (e) => {
        const chosen = new Set(params.getAll(key));
        if (e.target.checked) chosen.add(s); else chosen.delete(s);
        set(key, [...chosen]);
      } }), ' ', statusBadge(key, s), ' ', h('span', { class: 'count' }, String((counts || {})[s] || 0)))));
  const text = (key, placeholder, label) => h('input', { id: 'filter-' + key, type: 'search', placeholder, 'aria-label': label,
    value: params.getAll(key).join(', '), onchange: (e) => set(key, e.target.value.split(',').map((x) => x.trim())) });
  return h('aside', { class: 'filters', 'aria-label': 'Filters' },
    search,
    h('label', { class: 'check' }, h('input', { type: 'checkbox', id: 'filter-favourites', checked: params.get('favourites') === 'true',
      onchange: (e) => set('favourites', e.target.checked ? 'true' : '') }), ' Favourites only'),
    h('input', { id: 'filter-selector', type: 'search', placeholder: 'Labels, e.g. team=web', 'aria-label': 'Filter by labels',
      value: params.get('selector') || '', onchange: (e) => set('selector', e.target.value) }),
    text('annotation', 'Annotations, e.g. owner=web', 'Filter by annotations'),
    boxes('sync', 'Sync status', page.counts.sync),
    boxes('health', 'Health status', page.counts.health),
    boxes('autoSync', 'Auto sync', page.counts.autoSync, ['Enabled', 'Disabled']),
    boxes('operation', 'Operation', page.counts.operation, ['Running', 'Succeeded', 'Failed', 'Error', 'None']),
    select('project', 'Project', page.facets.projects),
    select('cluster', 'Cluster', page.facets.clusters),
    select('namespace', 'Namespace', page.facets.namespaces),
    select('repo', 'Repository', page.facets.repos),
    select('targetRevision', 'Target revision', page.facets.targetRevisions),
    h('button', { type: 'button', id: 'clear-filters', onclick: () => navigate('applications' + (view !== 'tiles' ? '?view=' + view : ''), true) }, 'Clear filters'));
}

// summaryView counts the apps the filters keep, as Argo CD's summary.
function summaryView(page) {
  const c = page.counts;
  const n = (m) => Object.keys(m || {}).filter(Boolean).length;
  const bars = (title, key, counts) => h('section', { class: 'summary-card', id: 'summary-' + key }, h('h2', {}, title),
    h('ul', { class: 'plain' }, Object.entries(counts || {}).sort((a, b) => b[1] - a[1]).map(([k, v]) => h('li', { class: 'bar-row' },
      statusBadge(key, k), h('meter', { min: '0', max: String(page.total || 1), value: String(v), 'aria-label': `${k}: ${v}` }),
      h('span', { class: 'count' }, String(v))))));
  return h('div', { id: 'apps-summary', class: 'summary-view' },
    h('dl', { class: 'summary totals' }, h('dt', {}, 'Applications'), h('dd', { id: 'summary-total' }, String(page.total)),
      h('dt', {}, 'Clusters'), h('dd', {}, String(n(c.clusters))), h('dt', {}, 'Namespaces'), h('dd', {}, String(n(c.namespaces)))),
    bars('Sync', 'sync', c.sync), bars('Health', 'health', c.health), bars('Auto sync', 'autosync', c.autoSync), bars('Operation', 'operation', c.operation));
}

// bulkBar chooses apps of the page and syncs, refreshes or deletes them,
// one API call each (the API checks each app's RBAC).
function bulkBar(page) {
  const count = h('span', { id: 'selected-count', class: 'count' }, outcome || `${selected.size} selected`);
  const run = (what, call) => async () => {
    const apps = [...selected.values()];
    if (apps.length === 0) return showError(new Error('Select applications first'));
    let done = 0;
    const failures = [];
    await Promise.all(apps.map(async (a) => {
      try {
        await call(a);
        done++;
      } catch (err) {
        failures.push(`${a.name}: ${err.message}`);
      }
    }));
    for (const f of failures) warn(`${what} ${f}`);
    if (!failures.length) selected.clear();
    outcome = `${what}: ${done} of ${apps.length} done`;
    count.textContent = outcome;
  };
  const path = (a) => `api/v1/applications/${encodeURIComponent(a.name)}`;
  const ns = (a) => 'appNamespace=' + encodeURIComponent(a.namespace);
  return h('div', { class: 'actions bulk', role: 'group', 'aria-label': 'Selected applications' },
    h('button', { type: 'button', id: 'select-page', onclick: () => {
      const all = page.items.every((a) => selected.has(favourites.key(a)));
      for (const a of page.items) if (all) selected.delete(favourites.key(a)); else selected.set(favourites.key(a), a);
      render();
    } }, 'Select page'), count,
    h('button', { type: 'button', id: 'bulk-sync', onclick: () => dialog(`Sync ${selected.size} applications`,
      [h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'prune', id: 'bulk-prune' }), ' Prune')], 'Sync',
      (el) => run('Sync', (a) => api(`${path(a)}/sync`, { method: 'POST', body: JSON.stringify({ prune: el.prune.checked, appNamespace: a.namespace }) }))()) }, 'Sync'),
    h('button', { type: 'button', id: 'bulk-refresh', onclick: run('Refresh', (a) => api(`${path(a)}?${ns(a)}&refresh=normal`)) }, 'Refresh'),
    h('button', { type: 'button', id: 'bulk-delete', onclick: () => dialog(`Delete ${selected.size} applications`,
      [h('p', {}, 'The applications and the resources they deployed (foreground cascade).')], 'Delete',
      () => run('Delete', (a) => api(`${path(a)}?${ns(a)}&cascade=true`, { method: 'DELETE' }))()) }, 'Delete'));
}

// appCard is one app as a tile or a table row, with its favourite star
// and its selection box.
function appCard(a, view) {
  const rel = appRel(a.namespace, a.name);
  const dest = `${a.cluster}${a.destNamespace ? ' / ' + a.destNamespace : ''}`;
  const fav = favourites.all().has(favourites.key(a));
  const star = h('button', { type: 'button', class: 'star' + (fav ? ' on' : ''), 'aria-pressed': String(fav),
    'aria-label': `Favourite ${a.name}`, onclick: () => { favourites.toggle(a); render(); } }, fav ? '★' : '☆');
  const pick = h('input', { type: 'checkbox', class: 'pick', 'aria-label': `Select ${a.name}`, checked: selected.has(favourites.key(a)),
    onchange: (e) => {
      if (e.target.checked) selected.set(favourites.key(a), a); else selected.delete(favourites.key(a));
      outcome = '';
      const c = document.getElementById('selected-count');
      if (c) c.textContent = `${selected.size} selected`;
    } });
  if (view === 'list') {
    return h('tr', { class: 'app', 'data-app': a.name },
      h('td', {}, pick, star), h('td', {}, link(rel, a.name)), h('td', {}, a.project), h('td', {}, statusBadge('sync', a.sync)),
      h('td', {}, statusBadge('health', a.health)), h('td', {}, a.repo), h('td', {}, dest));
  }
  return h('article', { class: 'app tile', 'data-app': a.name },
    h('div', { class: 'tile-head' }, pick, h('h2', {}, link(rel, a.name)), star),
    h('p', {}, statusBadge('health', a.health), ' ', statusBadge('sync', a.sync), a.operation === 'Running' ? ' syncing…' : '',
      a.autoSync ? h('span', { class: 'count' }, ' auto-sync') : ''),
    h('dl', {}, h('dt', {}, 'Project'), h('dd', {}, a.project),
      h('dt', {}, 'Repository'), h('dd', {}, a.repo),
      h('dt', {}, a.chart ? 'Chart' : 'Path'), h('dd', {}, a.chart || a.path || '.'),
      h('dt', {}, 'Target'), h('dd', {}, a.targetRevision || 'HEAD'),
      h('dt', {}, 'Destination'), h('dd', {}, dest)));
}
