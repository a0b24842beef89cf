// The resource panel: one resource's diff, manifests, events, logs,
// terminal and actions.

import { api, appPath, can, deepLinks, dialog, h, onLeave, settings, showError, shown } from './core.js';
import { mount, resourceTabs } from './ext.js';
import { Terminal } from './term.js';

// openPanel is the resource panel open on the page, kept across redraws.
let openPanel = null;

// panelSeq counts the panels drawn: a panel still reading what to show
// when another is asked for stops there.
let panelSeq = 0;

// closeStream ends the panel's log stream or terminal session.
let closeStream = () => {};

// panelStream ends the panel's stream, if any, and keeps close as the
// new one's end, run when the panel changes or the page is left.
function panelStream(close) {
  closeStream();
  closeStream = close;
  onLeave(close, true);
}

// appTree is the resource tree of the app page the panel is on, for the
// resource extensions.
let appTree = null;

// setTree keeps the app page's resource tree for the panel.
export function setTree(tree) {
  appTree = tree;
}

// sameResource tells whether a and b name the same object.
function sameResource(a, b) {
  return a.kind === b.kind && a.name === b.name && (a.namespace || '') === (b.namespace || '') && (a.group || '') === (b.group || '');
}

// keptPanel is the panel open on app's page, kept as it is (its tab, its
// log stream or terminal) when a live update draws the page again, with
// the resource's summary brought up to date from nodes; null when none is
// open there.
export function keptPanel(app, nodes) {
  const panel = document.getElementById('panel');
  if (!panel || !openPanel || openPanel.app !== app.metadata.name) return null;
  const { res } = openPanel;
  const now = nodes.find((n) => sameResource(n, res));
  const summary = panel.querySelector('#resource-summary');
  if (now && summary) {
    openPanel.res = now;
    summary.replaceWith(resourceSummary(app, now));
  }
  return panel;
}

// reopenPanel opens again the panel that was open on app's page when the
// page is drawn anew (coming back to it), unless it was kept.
export function reopenPanel(app, kept) {
  if (!kept && openPanel && openPanel.app === app.metadata.name) resourcePanel(app, openPanel.res, openPanel.tab);
}

// resourcePanel shows one resource: its diff (desired against live, side
// by side or unified), its live and desired manifests, and a Pod's logs.
export async function resourcePanel(app, res, tab = 'diff') {
  const seq = ++panelSeq;
  const same = openPanel && sameResource(openPanel.res, res);
  openPanel = { app: app.metadata.name, res, tab };
  panelStream(() => {});
  const panel = document.getElementById('panel');
  if (!panel) return;
  // Another resource's panel goes at once: its tabs are not to be
  // clicked while this one's are read.
  if (!same) panel.replaceChildren(h('p', { class: 'count' }, `${res.kind} ${res.name}…`));
  const exec = res.kind === 'Pod' && (await settings()).execEnabled && await can('create', app, 'exec');
  if (seq !== panelSeq) return; // another tab or resource was chosen meanwhile
  const extensions = resourceTabs(res);
  const titles = { diff: 'Diff', live: 'Live manifest', desired: 'Desired manifest', events: 'Events', logs: 'Logs', terminal: 'Terminal',
    ...Object.fromEntries(extensions.map((e, i) => ['ext-' + i, e.title])) };
  const tabs = ['diff', 'live', 'desired', 'events'].concat(logKinds.includes(res.kind) ? ['logs'] : [], exec ? ['terminal'] : [],
    extensions.map((e, i) => 'ext-' + i));
  const body = h('div', { class: 'panel-body' });
  panel.replaceChildren(h('div', { class: 'toolbar' }, h('h2', {}, `${res.kind} ${res.name}`),
    h('div', { class: 'actions', role: 'tablist' }, tabs.map((t) => h('button', { type: 'button', role: 'tab', id: 'tab-' + t,
      'aria-selected': String(t === tab), onclick: () => resourcePanel(app, res, t) }, titles[t])),
    h('button', { type: 'button', id: 'resource-actions', onclick: () => actionsDialog(app, res) }, 'Actions'),
    h('button', { type: 'button', id: 'delete-resource', onclick: () => deleteResourceDialog(app, res) }, 'Delete'),
    h('button', { type: 'button', id: 'close-panel', onclick: () => { openPanel = null; panelStream(() => {}); panel.replaceChildren(); } }, 'Close'))),
  resourceSummary(app, res), body);
  if (tab === 'logs') return streamLogs(app, res, body);
  if (tab === 'terminal') return openTerminal(app, res, body);
  if (tab === 'events') return showEvents(app, res, body);
  if (tab.startsWith('ext-')) return showExtension(app, res, extensions[Number(tab.slice(4))], body);
  const q = new URLSearchParams({ appNamespace: app.metadata.namespace, kind: res.kind, name: res.name, namespace: res.namespace || '', group: res.group || '' });
  const found = await api(`${appPath(app)}/managed-resources?${q}`);
  const d = (found.items || [])[0] || {};
  const yaml = (text) => text ? JSON.stringify(JSON.parse(text), null, 2) : '';
  const live = yaml(d.normalizedLiveState || d.liveState), desired = yaml(d.predictedLiveState || d.targetState);
  if (tab === 'live') return body.replaceChildren(await liveEditor(app, res, d.liveState ? JSON.parse(d.liveState) : null, yaml(d.liveState)));
  if (tab === 'desired') return body.replaceChildren(h('pre', { id: 'manifest' }, yaml(d.targetState)));
  const unified = localStorage.getItem('diff') !== 'split';
  body.replaceChildren(h('div', { class: 'actions' },
    h('label', { class: 'check' }, h('input', { type: 'checkbox', id: 'diff-split', checked: !unified, onchange: (e) => {
      localStorage.setItem('diff', e.target.checked ? 'split' : 'unified');
      resourcePanel(app, res, 'diff');
    } }), ' Side by side')),
  diffView(live, desired, unified));
}

// showExtension draws a resource extension's tab with the live object.
async function showExtension(app, res, extension, body) {
  if (!extension) return;
  const live = await api(`${appPath(app)}/resource?${resourceQuery(app, res)}`).then((r) => JSON.parse(r.manifest || 'null'))
    .catch(shown(`The live ${res.kind} ${res.name}`, null));
  body.replaceChildren(mount(extension.component, { application: app, resource: live, tree: appTree }, { id: 'resource-extension' }));
}

// resourceSummary shows what the tree knows of a resource (its health
// and its message, its info items and images) and its deep links
// (argocd-cm's resource.links).
function resourceSummary(app, res) {
  const info = (res.info || []).map((i) => [i.name, i.value]);
  const rows = [['Namespace', res.namespace], ['Created', res.createdAt], ['Health', res.health && res.health.status],
    ['Health details', res.health && res.health.message], ...info, ['Images', (res.images || []).join(', ')]].filter(([, v]) => v);
  const links = deepLinks('resource-links', api(`${appPath(app)}/resource/links?${resourceQuery(app, res)}`).catch(shown(`The links of ${res.kind} ${res.name}`, {})));
  return h('div', { id: 'resource-summary' }, h('dl', { class: 'summary' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])), links);
}

// mergePatch is the JSON merge patch turning a into b.
function mergePatch(a, b) {
  const patch = {};
  for (const k of Object.keys(b)) {
    if (JSON.stringify(a[k]) === JSON.stringify(b[k])) continue;
    const object = (v) => v && typeof v === 'object' && !Array.isArray(v);
    patch[k] = object(a[k]) && object(b[k]) ? mergePatch(a[k], b[k]) : b[k];
  }
  for (const k of Object.keys(a)) if (!(k in b)) patch[k] = null;
  return patch;
}

// liveEditor shows the live manifest and, to those who may update the
// app, edits it: saving patches the live object with the changes.
async function liveEditor(app, res, live, text) {
  const pre = h('pre', { id: 'manifest' }, text);
  if (!live || !(await can('update', app))) return pre;
  const box = h('div', {}, h('div', { class: 'actions' }, h('button', { type: 'button', id: 'edit-live', onclick: () => {
    const area = h('textarea', { id: 'live-editor', rows: '24', spellcheck: 'false', 'aria-label': `Live manifest of ${res.kind} ${res.name} (JSON)` }, text);
    const form = h('form', { class: 'dialog-form', onsubmit: async (e) => {
      e.preventDefault();
      try {
        const patch = mergePatch(live, JSON.parse(area.value));
        const q = resourceQuery(app, res);
        q.set('patchType', 'application/merge-patch+json');
        await api(`${appPath(app)}/resource?${q}`, { method: 'POST', body: JSON.stringify(JSON.stringify(patch)) });
        delete form.dataset.dirty;
        resourcePanel(app, res, 'live');
      } catch (err) {
        showError(err);
      }
    } }, area, h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'save-live' }, 'Save'),
      h('button', { type: 'button', onclick: () => resourcePanel(app, res, 'live') }, 'Cancel')));
    form.addEventListener('input', () => { form.dataset.dirty = 'true'; });
    box.replaceChildren(form);
  } }, 'Edit')), pre);
  return box;
}

// diffView shows the lines of a (live) against b (desired): removed lines
// red, added green, from a longest-common-subsequence of the lines; id
// names the element (null: none).
export function diffView(a, b, unified, id = 'diff') {
  const x = a.split('\n'), y = b.split('\n');
  if (x.length * y.length > 4e6) return h('p', {}, 'Too large to compare here.');
  const n = x.length, m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const rows = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { rows.push(['same', x[i], y[j]]); i++; j++; }
    else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) { rows.push(['del', x[i], '']); i++; } // removals first
    else { rows.push(['add', '', y[j]]); j++; }
  }
  const changed = rows.some((r) => r[0] !== 'same');
  if (unified) {
    return h('pre', { id, class: 'diff' + (changed ? ' changed' : '') }, rows.map(([k, l, r]) =>
      h('div', { class: k }, k === 'add' ? '+ ' + r : k === 'del' ? '- ' + l : '  ' + l)));
  }
  return h('table', { id, class: 'diff split' + (changed ? ' changed' : '') }, h('tbody', {}, rows.map(([k, l, r]) =>
    h('tr', { class: k }, h('td', { class: k === 'del' ? 'del' : '' }, l), h('td', { class: k === 'add' ? 'add' : '' }, r)))));
}

// resourceQuery names one resource of app in a query, as the API wants.
function resourceQuery(app, res) {
  return new URLSearchParams({ appNamespace: app.metadata.namespace, namespace: res.namespace || '', resourceName: res.name,
    kind: res.kind, group: res.group || '', version: res.version || '' });
}

async function showEvents(app, res, box) {
  const q = new URLSearchParams({ appNamespace: app.metadata.namespace, resourceNamespace: res.namespace || '', resourceName: res.name,
    kind: res.kind, group: res.group || '' });
  if (res.uid) q.set('resourceUID', res.uid);
  const events = await api(`${appPath(app)}/events?${q}`);
  box.replaceChildren(h('table', { id: 'events' }, h('thead', {}, h('tr', {}, ['Type', 'Reason', 'Message', 'Count', 'Last seen'].map((c) => h('th', {}, c)))),
    h('tbody', {}, (events.items || []).map((e) => h('tr', { class: 'event' }, h('td', {}, e.type || ''), h('td', {}, e.reason || ''),
      h('td', {}, e.message || ''), h('td', {}, String(e.count || 1)), h('td', {}, e.lastTimestamp || e.eventTime || ''))))));
}

// actionsDialog offers the resource's actions (restart, scale, …), with
// a field for each parameter an action asks for (scale's replicas).
async function actionsDialog(app, res) {
  const found = await api(`${appPath(app)}/resource/actions?${resourceQuery(app, res)}`);
  const actions = (found.actions || []).filter((a) => !a.disabled);
  if (actions.length === 0) return showError(new Error(`${res.kind} ${res.name} has no actions`));
  const paramID = (a, p) => `action-param-${a.name}-${p.name}`;
  dialog(`Run an action on ${res.kind} ${res.name}`, actions.map((a, i) => h('div', {}, h('label', { class: 'check' },
    h('input', { type: 'radio', name: 'action', value: a.name, id: 'action-' + a.name, checked: i === 0 }), ' ', a.displayName || a.name),
  (a.params || []).map((p) => h('label', { class: 'field' }, `${p.name} `, h('input', { type: 'text', id: paramID(a, p), name: paramID(a, p) }))))),
  'Run', async (el) => {
    const q = resourceQuery(app, res);
    const chosen = actions.find((a) => a.name === el.action.value);
    const resourceActionParameters = (chosen.params || []).map((p) => ({ name: p.name, value: el[paramID(chosen, p)].value }));
    await api(`${appPath(app)}/resource/actions/v2`, { method: 'POST', body: JSON.stringify({
      name: app.metadata.name, appNamespace: app.metadata.namespace, namespace: res.namespace || '', resourceName: res.name,
      version: q.get('version'), group: res.group || '', kind: res.kind, action: chosen.name, resourceActionParameters }) });
  });
}

function deleteResourceDialog(app, res) {
  const choice = (value, label, checked) => h('label', { class: 'check' },
    h('input', { type: 'radio', name: 'how', value, id: 'delete-' + value, checked }), ' ', label);
  dialog(`Delete ${res.kind} ${res.name}`, [choice('foreground', 'Delete', true), choice('orphan', 'Delete, keeping its dependents'),
    choice('force', 'Force delete')], 'Delete', async (el) => {
    const q = resourceQuery(app, res);
    if (el.how.value !== 'foreground') q.set(el.how.value, 'true');
    await api(`${appPath(app)}/resource?${q}`, { method: 'DELETE' });
    openPanel = null;
  });
}

// logKinds are the kinds whose Pods' logs the panel shows together.
const logKinds = ['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Rollout'];

// logQuery selects res's logs: a Pod's, or every Pod of a workload.
function logQuery(app, res, opts) {
  const q = new URLSearchParams({ appNamespace: app.metadata.namespace, namespace: res.namespace || '', container: opts.container || '',
    follow: String(!!opts.follow), tailLines: '1000', previous: String(!!opts.previous) });
  if (res.kind === 'Pod') q.set('podName', res.name);
  else for (const [k, v] of Object.entries({ kind: res.kind, resourceName: res.name, group: res.group || '' })) q.set(k, v);
  if (opts.filter) q.set('filter', opts.filter);
  return q;
}

// logLine is one entry as shown: the pod when several are followed, the
// time when asked for.
function logLine(r, res, opts) {
  return (res.kind !== 'Pod' && r.podName ? `${r.podName} ` : '') + (opts.timestamps && r.timeStampStr ? `${r.timeStampStr} ` : '') + (r.content || '');
}

// streamLogs follows the logs of a Pod, or of every Pod of a workload,
// into box until the panel changes: a container to choose, the previous
// container's logs, timestamps, a filter, and a download of what is kept.
async function streamLogs(app, res, box) {
  const opts = logOptions;
  const live = res.kind === 'Pod' ? await api(`${appPath(app)}/resource?${resourceQuery(app, { ...res, version: res.version || 'v1' })}`)
    .catch(shown(`Reading ${res.kind} ${res.name}`, {})) : {};
  if (!box.isConnected) return; // the panel changed meanwhile
  const spec = JSON.parse(live.manifest || '{}').spec || {};
  const containers = [...(spec.initContainers || []), ...(spec.containers || [])].map((c) => c.name);
  if (containers.length && !containers.includes(opts.container)) opts.container = (spec.containers || [])[0] ? spec.containers[0].name : containers[0];
  const out = h('pre', { id: 'logs', class: 'logs' });
  const restart = () => streamLogs(app, res, box);
  const toggle = (key, label) => h('label', { class: 'check' }, h('input', { type: 'checkbox', id: 'logs-' + key, checked: !!opts[key],
    onchange: (e) => { opts[key] = e.target.checked; restart(); } }), ' ' + label);
  const filter = h('input', { id: 'logs-filter', type: 'search', placeholder: 'Filter (!text to exclude)', 'aria-label': 'Filter the log lines', value: opts.filter || '',
    onchange: (e) => { opts.filter = e.target.value; restart(); } });
  const download = h('button', { type: 'button', id: 'logs-download', onclick: async () => {
    try {
      const text = await fetch(`${appPath(app)}/logs?${logQuery(app, res, { ...opts, follow: false })}`, { credentials: 'same-origin' }).then((r) => r.text());
      const lines = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => (JSON.parse(l.slice(5)).result || {}))
        .filter((r) => !r.last).map((r) => logLine(r, res, opts));
      const a = h('a', { href: URL.createObjectURL(new Blob([lines.join('\n') + '\n'], { type: 'text/plain' })), download: `${res.name}.log` });
      a.click();
      URL.revokeObjectURL(a.href);
    } catch (err) {
      showError(err);
    }
  } }, 'Download');
  box.replaceChildren(h('div', { class: 'actions logs-controls' },
    containers.length ? h('label', {}, 'Container ', h('select', { id: 'logs-container', onchange: (e) => { opts.container = e.target.value; restart(); } },
      containers.map((c) => h('option', { value: c, selected: c === opts.container }, c)))) : '',
    toggle('follow', 'Follow'), toggle('previous', 'Previous container'), toggle('timestamps', 'Timestamps'), filter, download), out);
  const url = `${appPath(app)}/logs?${logQuery(app, res, opts)}`;
  const es = new EventSource(url);
  es.onmessage = (e) => {
    const r = JSON.parse(e.data).result || {};
    if (r.last) { es.close(); return; }
    out.append(logLine(r, res, opts) + '\n');
    if (out.childNodes.length > 5000) out.firstChild.remove();
  };
  // A refused stream (too many Pods, no permission) closes for good: ask
  // once more for the API's reason and show it.
  es.onerror = async () => {
    if (es.readyState !== EventSource.CLOSED || out.childNodes.length) return;
    const stop = new AbortController();
    const resp = await fetch(url, { credentials: 'same-origin', signal: stop.signal }).catch(() => null);
    if (resp && !resp.ok) {
      const body = await resp.json().catch(() => ({}));
      out.replaceChildren(h('span', { id: 'logs-error', class: 'error-text' }, body.message || resp.statusText));
    }
    stop.abort();
  };
  panelStream(() => es.close());
}

// logOptions are the log view's choices, kept while the page is open.
const logOptions = { follow: true, previous: false, timestamps: false, filter: '', container: '' };

// openTerminal opens a shell in a container of the Pod (Argo CD's web
// terminal, when argocd-cm's exec.enabled and RBAC's exec allow it) in a
// terminal: keys go to the shell as a terminal sends them, and its output
// is drawn as a terminal draws it, until the panel changes.
async function openTerminal(app, res, box) {
  const live = await api(`${appPath(app)}/resource?${resourceQuery(app, { ...res, version: res.version || 'v1' })}`).catch(shown(`Reading ${res.kind} ${res.name}`, {}));
  if (!box.isConnected) return; // the panel changed meanwhile
  const containers = ((JSON.parse(live.manifest || '{}').spec || {}).containers || []).map((c) => c.name);
  const screen = h('div', { id: 'terminal-output', class: 'term', 'aria-label': `Terminal of ${res.name}`, 'aria-live': 'off' });
  const pick = h('select', { id: 'terminal-container', 'aria-label': 'Container' }, containers.map((c) => h('option', { value: c }, c)));
  box.replaceChildren(h('div', { class: 'actions' }, h('label', {}, 'Container ', pick),
    h('span', { class: 'count' }, 'Click the terminal, then type; Ctrl+C and the arrow keys go to the shell.')), screen);
  const rows = 24;
  const cols = Math.max(40, Math.min(200, Math.floor((screen.clientWidth - 16) / charWidth(screen)) || 100));
  let ws;
  const term = new Terminal(screen, (data) => {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ operation: 'stdin', data }));
  }, rows, cols);
  const connect = () => {
    if (ws) ws.close();
    term.reset();
    const q = new URLSearchParams({ pod: res.name, container: pick.value, appName: app.metadata.name,
      appNamespace: app.metadata.namespace, projectName: app.spec.project || 'default', namespace: res.namespace || '' });
    const url = new URL(`terminal?${q}`, document.baseURI);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    ws = new WebSocket(url);
    ws.onopen = () => {
      screen.dataset.state = 'open';
      ws.send(JSON.stringify({ operation: 'resize', rows, cols }));
    };
    ws.onmessage = (e) => term.write(JSON.parse(e.data).data || '');
    ws.onclose = () => { screen.dataset.state = 'closed'; term.write('\r\n[session ended]\r\n'); };
  };
  pick.onchange = connect;
  connect();
  screen.focus();
  panelStream(() => ws.close());
}

// charWidth is the width of one character of el's font.
function charWidth(el) {
  const probe = h('span', { class: 'probe' }, 'MMMMMMMMMM');
  el.append(probe);
  const w = probe.getBoundingClientRect().width / 10;
  probe.remove();
  return w || 8;
}
