// The ApplicationSet pages: the list and one set with its rollout.

import { api, appRel, h, header, link, onLeave, render, root, statusBadge, table } from './core.js';

// generatorKinds names an ApplicationSet's generators, nested ones in
// brackets: "matrix(git, list)".
function generatorKinds(gens) {
  return (gens || []).map((g) => {
    const kind = Object.keys(g).find((k) => !['selector', 'values', 'template'].includes(k)) || '?';
    const nested = g[kind] && g[kind].generators;
    return nested ? `${kind}(${generatorKinds(nested)})` : kind;
  }).join(', ');
}

// appSetState is an ApplicationSet's state in a word, from its
// conditions: Error, Progressing (a rollout runs), Healthy or Unknown.
function appSetState(as) {
  const conds = (as.status && as.status.conditions) || [];
  const on = (type) => conds.some((c) => c.type === type && c.status === 'True');
  if (on('ErrorOccurred')) return 'Error';
  if (on('RolloutProgressing')) return 'Progressing';
  if (on('ResourcesUpToDate')) return 'Healthy';
  return 'Unknown';
}

function appSetRel(as) {
  return `applicationsets/${encodeURIComponent(as.metadata.namespace)}/${encodeURIComponent(as.metadata.name)}`;
}

// watchAppSets redraws the page (at most every half second) when an
// ApplicationSet changes; name limits it to one.
function watchAppSets(name) {
  const q = new URLSearchParams({ resourceVersion: '1' });
  if (name) q.set('name', name);
  const es = new EventSource('api/v1/stream/applicationsets?' + q);
  let timer;
  es.onmessage = () => { clearTimeout(timer); timer = setTimeout(() => { es.close(); render(); }, 500); };
  onLeave(() => { clearTimeout(timer); es.close(); });
}

export async function renderAppSets(user) {
  const list = await api('api/v1/applicationsets');
  const items = list.items || [];
  const rows = items.map((as) => {
    const apps = (as.status && as.status.resources) || [];
    const error = ((as.status && as.status.conditions) || []).find((c) => c.type === 'ErrorOccurred' && c.status === 'True');
    return h('tr', { class: 'appset', 'data-appset': as.metadata.name },
      h('td', {}, link(appSetRel(as), as.metadata.name)),
      h('td', {}, as.spec.template.spec.project || ''),
      h('td', {}, generatorKinds(as.spec.generators)),
      h('td', {}, statusBadge('appset', appSetState(as)), error ? h('div', { class: 'error-text' }, error.message) : ''),
      h('td', {}, h('span', { class: 'count' }, `${apps.length} `),
        h('ul', { class: 'plain' }, apps.slice(0, 5).map((a) => h('li', {}, link(appRel(a.namespace || as.metadata.namespace, a.name), a.name), ' ',
          statusBadge('health', (a.health && a.health.status) || 'Unknown')))),
        apps.length > 5 ? h('span', { class: 'count' }, `and ${apps.length - 5} more`) : ''));
  });
  root.replaceChildren(header(user), h('main', { class: 'detail' }, h('h1', {}, 'ApplicationSets'),
    items.length === 0 ? h('p', { id: 'no-appsets' }, 'No ApplicationSets.') :
      h('table', { id: 'appsets' }, h('thead', {}, h('tr', {}, ['Name', 'Project', 'Generators', 'Status', 'Applications'].map((c) => h('th', {}, c)))),
        h('tbody', {}, rows))));
  watchAppSets();
}

export async function renderAppSet(user, r) {
  const q = new URLSearchParams({ appsetNamespace: r.namespace });
  const path = `api/v1/applicationsets/${encodeURIComponent(r.appset)}`;
  const as = await api(`${path}?${q}`);
  const events = await api(`${path}/events?${q}`).catch((err) => ({ error: err.message }));
  const st = as.status || {};
  const time = (t) => (t ? new Date(t).toLocaleString() : '');
  const conditions = table('appset-conditions', ['Type', 'Status', 'Reason', 'Message', 'Changed'],
    (st.conditions || []).map((c) => [c.type, c.status, c.reason || '', c.message || '', time(c.lastTransitionTime)]), 'condition');
  const rolling = as.spec.strategy && as.spec.strategy.type === 'RollingSync' && as.spec.strategy.rollingSync;
  const steps = rolling ? h('section', { id: 'appset-steps' }, h('h2', {}, 'Progressive sync steps'),
    h('ol', {}, (rolling.steps || []).map((s, i) => h('li', { class: 'step', 'data-step': String(i + 1) },
      (s.matchExpressions || []).map((e) => `${e.key} ${e.operator} (${(e.values || []).join(', ')})`).join(' and ') || 'every Application',
      s.maxUpdate !== undefined ? `, at most ${s.maxUpdate} at once` : ''))),
    table('appset-app-status', ['Application', 'Step', 'Status', 'Message', 'Changed'],
      (st.applicationStatus || []).map((a) => [link(appRel(as.metadata.namespace, a.application), a.application), a.step,
        statusBadge('rollout', a.status), a.message || '', time(a.lastTransitionTime)]), 'app-status')) : '';
  const apps = table('appset-apps', ['Application', 'Sync', 'Health'], (st.resources || []).map((a) => [
    link(appRel(a.namespace || as.metadata.namespace, a.name), a.name), statusBadge('sync', a.status || 'Unknown'),
    statusBadge('health', (a.health && a.health.status) || 'Unknown')]), 'appset-app');
  const eventList = events.error ? h('p', { class: 'error-text' }, events.error) :
    table('appset-events', ['Reason', 'Message', 'When'], (events.items || []).map((e) => [e.reason || '', e.message || '',
      time(e.lastTimestamp || e.eventTime || (e.metadata && e.metadata.creationTimestamp))]), 'event');
  root.replaceChildren(header(user), h('main', { class: 'detail' },
    h('p', {}, link('applicationsets', '← ApplicationSets')),
    h('div', { class: 'toolbar' }, h('h1', {}, as.metadata.name), statusBadge('appset', appSetState(as))),
    h('dl', { class: 'summary' }, h('dt', {}, 'Namespace'), h('dd', {}, as.metadata.namespace),
      h('dt', {}, 'Project'), h('dd', {}, as.spec.template.spec.project || ''),
      h('dt', {}, 'Generators'), h('dd', {}, generatorKinds(as.spec.generators)),
      h('dt', {}, 'Strategy'), h('dd', {}, (as.spec.strategy && as.spec.strategy.type) || 'AllAtOnce')),
    h('h2', {}, 'Conditions'), conditions, steps,
    h('h2', {}, `Applications (${(st.resources || []).length})`), apps,
    h('h2', {}, 'Events'), eventList));
  watchAppSets(as.metadata.name);
}
