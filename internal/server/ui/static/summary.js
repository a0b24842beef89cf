// An application's details, as Argo CD's details panel has them: the
// summary (edited in place: source, destination, sync policy and
// options, labels, annotations and info), the source's parameters, the
// manifest to edit as YAML, the diff of all its resources, and its events.

import { api, appPath, appQuery, check, h, lines, render, settings, showError, statusBadge } from './core.js';
import { diffView } from './panel.js';
import { toYAML } from './yaml.js';

const tabs = { summary: 'Summary', parameters: 'Parameters', manifest: 'Manifest', diff: 'Diff', events: 'Events' };

// appDetails draws the details' tabs, the URL's details parameter
// choosing one (kept through live redraws); parameters is the
// parameters form.
export function appDetails(app, mayUpdate, parameters) {
  const bar = h('div', { class: 'actions', role: 'tablist', 'aria-label': 'Application details' });
  const body = h('div', { class: 'details-body' });
  const show = (tab) => {
    const q = new URLSearchParams(location.search);
    if (tab === 'summary') q.delete('details'); else q.set('details', tab);
    history.replaceState(null, '', location.pathname + (q.toString() ? '?' + q : ''));
    bar.replaceChildren(...Object.entries(tabs).filter(([t]) => t !== 'parameters' || parameters).map(([t, label]) =>
      h('button', { type: 'button', role: 'tab', id: 'details-' + t, 'aria-selected': String(t === tab), onclick: () => show(t) }, label)));
    const content = { summary: () => summary(app, mayUpdate), parameters: () => parameters, manifest: () => manifest(app, mayUpdate),
      diff: () => appDiff(app), events: () => appEvents(app) }[tab]();
    Promise.resolve(content).then((c) => body.replaceChildren(c || ''), (err) => body.replaceChildren(h('p', { class: 'error-text' }, err.message)));
  };
  const asked = new URLSearchParams(location.search).get('details');
  show(tabs[asked] && (asked !== 'parameters' || parameters) ? asked : 'summary');
  return h('section', { id: 'app-details' }, h('h2', {}, 'Details'), bar, body);
}

// save writes the app back (the API refuses it when it changed since it
// was read), then redraws.
async function save(app, body, yaml) {
  try {
    await api(`${appPath(app)}?${appQuery(app)}&validate=true`, { method: 'PUT', body,
      headers: yaml ? { 'Content-Type': 'application/yaml' } : {} });
    render();
  } catch (err) {
    showError(err);
  }
}

// pairs shows a map one key=value a line, and reads it back.
const pairs = {
  show: (m) => Object.entries(m || {}).map(([k, v]) => `${k}=${v}`).join('\n'),
  read: (text) => {
    const out = {};
    for (const l of lines(text)) {
      const i = l.indexOf('=');
      out[i < 0 ? l : l.slice(0, i)] = i < 0 ? '' : l.slice(i + 1);
    }
    return Object.keys(out).length ? out : undefined;
  },
};

// syncOptions are the options the summary turns on and off, as Argo CD's
// sync options panel offers them.
const syncOptions = [
  ['Validate=false', 'Skip schema validation'], ['CreateNamespace=true', 'Auto-create namespace'], ['PruneLast=true', 'Prune last'],
  ['ApplyOutOfSyncOnly=true', 'Apply out of sync only'], ['RespectIgnoreDifferences=true', 'Respect ignore differences'],
  ['ServerSideApply=true', 'Server-side apply'], ['Replace=true', 'Replace'], ['FailOnSharedResource=true', 'Fail on shared resource'],
];
const propagation = 'PrunePropagationPolicy=';

// summary shows the app's summary, and a form editing it to those who
// may update the app.
function summary(app, mayUpdate) {
  const s = app.spec, src = s.source || (s.sources || [])[0] || {}, pol = s.syncPolicy || {};
  const options = pol.syncOptions || [];
  const rows = [['Project', s.project], ['Labels', pairs.show(app.metadata.labels)], ['Annotations', pairs.show(app.metadata.annotations)],
    ['Cluster', s.destination.server || s.destination.name], ['Namespace', s.destination.namespace],
    ['Created', app.metadata.creationTimestamp], ['Repository', src.repoURL], ['Target revision', src.targetRevision || 'HEAD'],
    [src.chart ? 'Chart' : 'Path', src.chart || src.path || '.'], ['Sources', s.sources ? String(s.sources.length) : ''],
    ['Sync policy', pol.automated ? `Automated${pol.automated.prune ? ', prune' : ''}${pol.automated.selfHeal ? ', self heal' : ''}` : 'Manual'],
    ['Sync options', options.join(', ')], ['Retry', pol.retry ? `limit ${pol.retry.limit}` : ''],
    ...(s.info || []).map((i) => [i.name, i.value])].filter(([, v]) => v);
  const view = h('dl', { id: 'app-summary', class: 'summary' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', { class: 'pre' }, v)]));
  const edit = h('button', { type: 'button', id: 'edit-summary', disabled: !mayUpdate,
    title: mayUpdate ? null : 'You may not update this application', onclick: () => box.replaceChildren(summaryForm(app)) }, 'Edit');
  const box = h('div', {}, h('div', { class: 'actions' }, edit), view, statusBadgeSnippet(app));
  return box;
}

// statusBadgeSnippet shows the app's status badge and the Markdown that
// embeds it, when argocd-cm's statusbadge.enabled is set.
function statusBadgeSnippet(app) {
  const box = h('div', { id: 'status-badge' });
  settings().then((s) => {
    if (!s.statusBadgeEnabled) return;
    const badgeRoot = s.statusBadgeRootUrl || new URL(document.baseURI).href;
    const q = new URLSearchParams({ name: app.metadata.name, revision: 'true' });
    if (app.metadata.namespace !== s.controllerNamespace) q.set('namespace', app.metadata.namespace);
    const src = new URL(`api/badge?${q}`, badgeRoot).href;
    const page = new URL(`applications/${encodeURIComponent(app.metadata.namespace)}/${encodeURIComponent(app.metadata.name)}`, document.baseURI).href;
    box.replaceChildren(h('h3', {}, 'Status badge'), h('img', { src: `api/badge?${q}`, alt: `Status of ${app.metadata.name}` }),
      h('label', { for: 'badge-markdown' }, 'Markdown'), h('textarea', { id: 'badge-markdown', rows: '2', readonly: true }, `[![App Status](${src})](${page})`));
  });
  return box;
}

// summaryForm edits the summary; saving writes the whole app back.
function summaryForm(app) {
  const s = app.spec, pol = s.syncPolicy || {}, multi = !!s.sources;
  const src = s.source || {};
  const options = pol.syncOptions || [];
  const retry = pol.retry || {}, backoff = retry.backoff || {};
  const field = (id, label, value, attrs = {}) => [h('label', { for: id }, label), h('input', { id, name: id, value: value || '', ...attrs })];
  const area = (id, label, value) => [h('label', { for: id }, label), h('textarea', { id, name: id, rows: '3', spellcheck: 'false' }, value)];
  const propagationNow = (options.find((o) => o.startsWith(propagation)) || '').slice(propagation.length);
  const form = h('form', { id: 'summary-form', class: 'dialog-form wide', onsubmit: (e) => {
    e.preventDefault();
    const el = form.elements;
    const next = JSON.parse(JSON.stringify(app));
    delete next.status;
    delete next.operation;
    next.metadata = { name: app.metadata.name, namespace: app.metadata.namespace, resourceVersion: app.metadata.resourceVersion,
      finalizers: app.metadata.finalizers, labels: pairs.read(el.labels.value), annotations: pairs.read(el.annotations.value) };
    const spec = next.spec;
    spec.project = el.project.value;
    if (!multi) {
      spec.source = { ...src, repoURL: el.repoURL.value, targetRevision: el.targetRevision.value || undefined };
      if (src.chart !== undefined || el.chart.value) { spec.source.chart = el.chart.value || undefined; }
      if (!spec.source.chart) spec.source.path = el.path.value || undefined;
    }
    spec.destination = { server: el.destServer.value || undefined, name: el.destName.value || undefined, namespace: el.destNamespace.value || undefined };
    const nextOptions = options.filter((o) => !syncOptions.some(([opt]) => opt.split('=')[0] === o.split('=')[0]) && !o.startsWith(propagation));
    for (const [opt] of syncOptions) if (el['so-' + opt].checked) nextOptions.push(opt);
    if (el.propagation.value) nextOptions.push(propagation + el.propagation.value);
    const policy = { ...pol, syncOptions: nextOptions.length ? nextOptions : undefined, automated: undefined, retry: undefined };
    if (el.automated.checked) policy.automated = { prune: el.autoPrune.checked, selfHeal: el.autoSelfHeal.checked, allowEmpty: el.autoAllowEmpty.checked };
    if (el.retry.checked) {
      policy.retry = { limit: Number(el.retryLimit.value) || 0,
        backoff: { duration: el.retryDuration.value || undefined, factor: Number(el.retryFactor.value) || undefined, maxDuration: el.retryMax.value || undefined } };
    }
    spec.syncPolicy = Object.values(policy).some((v) => v !== undefined) ? policy : undefined;
    const info = lines(el.info.value).map((l) => {
      const i = l.indexOf('=');
      return { name: i < 0 ? l : l.slice(0, i), value: i < 0 ? '' : l.slice(i + 1) };
    });
    spec.info = info.length ? info : undefined;
    save(app, JSON.stringify(next));
  } },
  field('project', 'Project', s.project, { required: true }),
  area('labels', 'Labels (key=value, one a line)', pairs.show(app.metadata.labels)),
  area('annotations', 'Annotations (key=value, one a line)', pairs.show(app.metadata.annotations)),
  h('fieldset', {}, h('legend', {}, 'Source'), multi ? h('p', {}, 'This application has several sources: edit them in its manifest.') : [
    field('repoURL', 'Repository URL', src.repoURL, { required: true }), field('targetRevision', 'Target revision', src.targetRevision),
    field('path', 'Path', src.path), field('chart', 'Helm chart (instead of a path)', src.chart)]),
  h('fieldset', {}, h('legend', {}, 'Destination'), field('destServer', 'Cluster URL', s.destination.server),
    field('destName', 'Cluster name (instead of the URL)', s.destination.name), field('destNamespace', 'Namespace', s.destination.namespace)),
  h('fieldset', {}, h('legend', {}, 'Sync policy'),
    check('automated', 'Automated', !!pol.automated), check('autoPrune', 'Prune resources', !!(pol.automated && pol.automated.prune)),
    check('autoSelfHeal', 'Self heal', !!(pol.automated && pol.automated.selfHeal)), check('autoAllowEmpty', 'Allow empty', !!(pol.automated && pol.automated.allowEmpty)),
    syncOptions.map(([opt, label]) => check('so-' + opt, label, options.includes(opt))),
    h('label', { for: 'propagation' }, 'Prune propagation policy'),
    h('select', { id: 'propagation', name: 'propagation' }, ['', 'foreground', 'background', 'orphan'].map((v) =>
      h('option', { value: v, selected: v === propagationNow }, v || 'default (foreground)'))),
    check('retry', 'Retry', !!pol.retry), field('retryLimit', 'Retry limit', retry.limit !== undefined ? String(retry.limit) : '', { inputmode: 'numeric' }),
    field('retryDuration', 'Backoff duration', backoff.duration, { placeholder: '5s' }), field('retryFactor', 'Backoff factor', backoff.factor !== undefined ? String(backoff.factor) : '', { placeholder: '2' }),
    field('retryMax', 'Backoff max duration', backoff.maxDuration, { placeholder: '3m' })),
  area('info', 'Info (name=value, one a line)', (s.info || []).map((i) => `${i.name}=${i.value}`).join('\n')),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'save-summary' }, 'Save'),
    h('button', { type: 'button', id: 'cancel-summary', onclick: () => render() }, 'Cancel')));
  form.addEventListener('input', () => { form.dataset.dirty = 'true'; });
  return form;
}

// manifest shows the Application as YAML, edited and saved by those who
// may update it.
function manifest(app, mayUpdate) {
  const m = { apiVersion: app.apiVersion || 'argoproj.io/v1alpha1', kind: app.kind || 'Application',
    metadata: { name: app.metadata.name, namespace: app.metadata.namespace, labels: app.metadata.labels, annotations: app.metadata.annotations,
      finalizers: app.metadata.finalizers }, spec: app.spec };
  const text = h('textarea', { id: 'app-manifest', rows: '24', spellcheck: 'false', readonly: !mayUpdate, 'aria-label': 'Application manifest (YAML)' }, toYAML(JSON.parse(JSON.stringify(m))));
  const form = h('form', { id: 'manifest-form', class: 'dialog-form', onsubmit: (e) => {
    e.preventDefault();
    save(app, text.value, true);
  } }, text, h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'save-manifest', disabled: !mayUpdate }, 'Save')));
  form.addEventListener('input', () => { form.dataset.dirty = 'true'; });
  return form;
}

// appDiff shows the diff of every resource that differs from Git.
async function appDiff(app) {
  const found = await api(`${appPath(app)}/managed-resources?${appQuery(app)}`);
  const pretty = (text) => text ? JSON.stringify(JSON.parse(text), null, 2) : '';
  const changed = (found.items || []).filter((d) => pretty(d.normalizedLiveState || d.liveState) !== pretty(d.predictedLiveState || d.targetState));
  if (changed.length === 0) return h('p', { id: 'app-diff' }, 'Every resource is as Git has it.');
  return h('div', { id: 'app-diff' }, changed.map((d) => h('section', { class: 'resource-diff', 'data-kind': d.kind, 'data-name': d.name },
    h('h3', {}, `${d.kind} ${d.namespace ? d.namespace + '/' : ''}${d.name}`),
    diffView(pretty(d.normalizedLiveState || d.liveState), pretty(d.predictedLiveState || d.targetState), true, null))));
}

// appEvents lists the app's events, newest first.
async function appEvents(app) {
  const events = await api(`${appPath(app)}/events?${appQuery(app)}`);
  const when = (e) => e.lastTimestamp || e.eventTime || (e.metadata && e.metadata.creationTimestamp) || '';
  const items = (events.items || []).slice().sort((a, b) => String(when(b)).localeCompare(String(when(a))));
  if (items.length === 0) return h('p', { id: 'app-events' }, 'No events.');
  return h('table', { id: 'app-events' }, h('thead', {}, h('tr', {}, ['Type', 'Reason', 'Message', 'Count', 'Last seen'].map((c) => h('th', {}, c)))),
    h('tbody', {}, items.map((e) => h('tr', { class: 'event' }, h('td', {}, statusBadge('event', e.type || 'Normal')), h('td', {}, e.reason || ''),
      h('td', {}, e.message || ''), h('td', {}, String(e.count || 1)), h('td', {}, when(e))))));
}
