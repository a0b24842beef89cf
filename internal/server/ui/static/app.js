// One application's page: its status, operation, resources, parameters,
// images and history, with sync, rollback and delete.

import { api, appPath, appQuery, can, check, deepLinks, dialog, h, header, lines, link, navigate, render, root, showError, shown, statusBadge, watchApplications } from './core.js';
import { actionButtons, mount, statusBlocks, views as extensionViews } from './ext.js';
import { kindIcon } from './icons.js';
import { network } from './network.js';
import { keptPanel, reopenPanel, resourcePanel, setTree } from './panel.js';
import { pods } from './pods.js';
import { appDetails } from './summary.js';
import { tree, withSync } from './tree.js';

// syncOptionChoices are the sync dialog's options, as Argo CD's sync
// panel names them: the option each sets and its id.
const syncOptionChoices = [
  ['Validate=false', 'Skip schema validation', 'validateFalse'], ['CreateNamespace=true', 'Auto-create namespace', 'createNamespace'],
  ['PruneLast=true', 'Prune last', 'pruneLast'], ['ApplyOutOfSyncOnly=true', 'Apply out of sync only', 'applyOutOfSyncOnly'],
  ['RespectIgnoreDifferences=true', 'Respect ignore differences', 'respectIgnoreDifferences'],
  ['ServerSideApply=true', 'Server-side apply', 'serverSideApply'], ['Replace=true', 'Replace', 'replace'],
];

// syncDialog asks for a sync of the app: revision, prune, dry run, force,
// the sync options, the prune propagation policy, retries, and which
// resources.
function syncDialog(app) {
  const pol = app.spec.syncPolicy || {};
  const has = (opt) => (pol.syncOptions || []).includes(opt);
  const field = (id, label, attrs = {}) => [h('label', { for: 'opt-' + id }, label), h('input', { id: 'opt-' + id, name: id, ...attrs })];
  dialog('Synchronize ' + app.metadata.name, [
    h('label', { for: 'opt-revision' }, 'Revision'),
    h('input', { id: 'opt-revision', name: 'revision', value: (app.spec.source && app.spec.source.targetRevision) || 'HEAD' }),
    check('prune', 'Prune'), check('dryRun', 'Dry run'), check('force', 'Force'),
    h('fieldset', {}, h('legend', {}, 'Sync options'), syncOptionChoices.map(([opt, label, id]) => check(id, label, has(opt)))),
    h('label', { for: 'opt-propagation' }, 'Prune propagation policy'),
    h('select', { id: 'opt-propagation', name: 'propagation' }, ['foreground', 'background', 'orphan'].map((v) =>
      h('option', { value: v, selected: has('PrunePropagationPolicy=' + v) }, v))),
    h('fieldset', {}, h('legend', {}, 'Retry'), check('retry', 'Retry a failed sync', !!pol.retry),
      field('retryLimit', 'Limit', { value: String((pol.retry && pol.retry.limit) || 2), inputmode: 'numeric' }),
      field('retryDuration', 'Backoff duration', { value: (pol.retry && pol.retry.backoff && pol.retry.backoff.duration) || '5s' }),
      field('retryFactor', 'Backoff factor', { value: String((pol.retry && pol.retry.backoff && pol.retry.backoff.factor) || 2), inputmode: 'numeric' }),
      field('retryMax', 'Backoff max duration', { value: (pol.retry && pol.retry.backoff && pol.retry.backoff.maxDuration) || '3m' })),
    h('fieldset', { class: 'sync-resources' }, h('legend', {}, 'Resources'),
      ((app.status || {}).resources || []).map((r, i) => h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: 'resource', value: String(i), id: `sync-resource-${r.kind}-${r.name}`, checked: true }), ' ',
        `${r.kind} ${r.namespace ? r.namespace + '/' : ''}${r.name}`))),
  ], 'Synchronize', async (el) => {
    const items = syncOptionChoices.filter(([, , id]) => el[id].checked).map(([opt]) => opt);
    if (el.propagation.value !== 'foreground') items.push('PrunePropagationPolicy=' + el.propagation.value);
    const body = { revision: el.revision.value, prune: el.prune.checked, dryRun: el.dryRun.checked,
      syncOptions: { items }, appNamespace: app.metadata.namespace };
    if (el.force.checked) body.strategy = { apply: { force: true } };
    if (el.retry.checked) {
      body.retryStrategy = { limit: Number(el.retryLimit.value) || 0,
        backoff: { duration: el.retryDuration.value, factor: Number(el.retryFactor.value) || 2, maxDuration: el.retryMax.value } };
    }
    const all = (app.status || {}).resources || [];
    const boxes = [...document.querySelectorAll('dialog[open] input[name="resource"]')];
    if (boxes.some((b) => !b.checked)) {
      body.resources = boxes.filter((b) => b.checked).map((b) => {
        const r = all[Number(b.value)];
        return { group: r.group || '', kind: r.kind, name: r.name, namespace: r.namespace || '' };
      });
    }
    await api(`${appPath(app)}/sync`, { method: 'POST', body: JSON.stringify(body) });
  });
}

function deleteDialog(app) {
  const choice = (value, label, checked) => h('label', { class: 'check' },
    h('input', { type: 'radio', name: 'cascade', value, id: 'cascade-' + value, checked }), ' ', label);
  dialog('Delete ' + app.metadata.name, [
    h('p', {}, 'The Application and, with a cascade, the resources it deployed.'),
    choice('foreground', 'Foreground: delete the resources, then the app', true),
    choice('background', 'Background: delete the app, the resources after'),
    choice('non-cascading', 'Non-cascading: keep the resources'),
  ], 'Delete', async (el) => {
    const how = el.cascade.value;
    const q = how === 'non-cascading' ? 'cascade=false' : `cascade=true&propagationPolicy=${how}`;
    await api(`${appPath(app)}?${appQuery(app)}&${q}`, { method: 'DELETE' });
    navigate('applications');
  });
}

function rollbackDialog(app, hist) {
  dialog(`Roll ${app.metadata.name} back to ${(hist.revision || '').slice(0, 7)}`, [
    h('p', {}, `History entry ${hist.id}, deployed ${hist.deployedAt || ''}.`), check('prune', 'Prune'),
  ], 'Rollback', async (el) => {
    await api(`${appPath(app)}/rollback`, { method: 'POST',
      body: JSON.stringify({ id: hist.id, prune: el.prune.checked, appNamespace: app.metadata.namespace }) });
  });
}

// operationBlock shows the operation: asked for, running (with its
// resources and Terminate) or the last one's outcome.
function operationBlock(app, op, maySync) {
  const running = op && (op.phase === 'Running' || op.phase === 'Terminating');
  const terminate = h('button', { type: 'button', id: 'terminate', disabled: !maySync, onclick: async () => {
    try {
      await api(`${appPath(app)}/operation?${appQuery(app)}`, { method: 'DELETE' });
    } catch (err) {
      showError(err);
    }
  } }, 'Terminate');
  if (app.operation && !running) return h('p', { id: 'operation' }, 'Sync requested… ', terminate);
  if (!op) return '';
  return h('div', { id: 'operation' }, h('p', {}, running ? 'Syncing: ' : 'Last sync: ', statusBadge('operation', op.phase), ' ', op.message || '',
    op.phase === 'Running' ? [' ', terminate] : ''),
  h('details', { open: running }, h('summary', {}, 'Resources of the operation'),
    h('table', { id: 'operation-resources' }, h('tbody', {}, ((op.syncResult && op.syncResult.resources) || []).map((r) =>
      h('tr', { class: 'op-resource' }, h('td', {}, r.kind), h('td', {}, r.name), h('td', {}, statusBadge('op', r.status || r.hookPhase || '')),
        h('td', {}, r.message || '')))))));
}

// parametersForm edits the source's parameters: a Helm chart's values and
// parameters, a Kustomize app's images. Saving patches the Application.
function parametersForm(app, mayEdit) {
  const src = app.spec.source;
  const type = (app.status || {}).sourceType || (src && src.chart ? 'Helm' : '');
  if (!src || (type !== 'Helm' && type !== 'Kustomize')) return '';
  const helm = src.helm || {}, kustomize = src.kustomize || {};
  const area = (id, label, value) => [h('label', { for: id }, label), h('textarea', { id, name: id, rows: '5', spellcheck: 'false' }, value)];
  const form = h('form', { id: 'parameters', class: 'dialog-form wide', onsubmit: async (e) => {
    e.preventDefault();
    const el = form.elements;
    let source;
    if (type === 'Helm') {
      const parameters = lines(el.helmParameters.value).map((l) => {
        const i = l.indexOf('=');
        return i < 0 ? { name: l, value: '' } : { name: l.slice(0, i), value: l.slice(i + 1) };
      });
      source = { helm: { values: el.helmValues.value || null, parameters: parameters.length ? parameters : null } };
    } else {
      const images = lines(el.kustomizeImages.value);
      source = { kustomize: { images: images.length ? images : null } };
    }
    try {
      await api(`${appPath(app)}?${appQuery(app)}`, { method: 'PATCH', body: JSON.stringify({
        name: app.metadata.name, appNamespace: app.metadata.namespace, patchType: 'merge', patch: JSON.stringify({ spec: { source } }) }) });
      delete form.dataset.dirty;
      render();
    } catch (err) {
      showError(err);
    }
  } },
  h('h2', {}, 'Parameters'),
  type === 'Helm' ? [area('helmValues', 'Values (YAML)', helm.values || ''),
    area('helmParameters', 'Parameters (name=value, one a line)', (helm.parameters || []).map((p) => `${p.name}=${p.value}`).join('\n'))] :
    area('kustomizeImages', 'Images (name=newName:tag, one a line)', (kustomize.images || []).join('\n')),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'save-parameters', disabled: !mayEdit }, 'Save')));
  form.addEventListener('input', () => { form.dataset.dirty = 'true'; });
  return form;
}

// imageListKey is Argo CD Image Updater's annotation naming the images it
// keeps current: alias=name[:constraint], comma-separated.
const imageListKey = 'argocd-image-updater.argoproj.io/image-list';

// imagesSection shows, for an app the image updater follows, each image's
// deployed tag, its last update and its last error (from the updater's
// Events on the app).
async function imagesSection(app) {
  const list = ((app.metadata.annotations || {})[imageListKey] || '').split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) return '';
  const events = await api(`${appPath(app)}/events?${appQuery(app)}`).then((e) => e.items || []).catch(shown('The image updater\'s events', []));
  const updater = events.filter((e) => (e.source && e.source.component) === 'argocd-image-updater' || (e.reportingComponent === 'argocd-image-updater'))
    .sort((a, b) => String(b.lastTimestamp || b.eventTime || '').localeCompare(String(a.lastTimestamp || a.eventTime || '')));
  const deployed = ((app.status || {}).summary || {}).images || [];
  const rows = list.map((entry) => {
    const [alias, ref] = entry.includes('=') ? entry.split(/=(.*)/s) : ['', entry];
    const name = ref.replace(/:[^/:]*$/, '');
    const constraint = ref.length > name.length ? ref.slice(name.length + 1) : '';
    const short = name.split('/').pop();
    const current = deployed.find((d) => d.replace(/[:@].*$/, '').endsWith(short)) || '';
    const mentions = (e) => (e.message || '').includes(name) || (e.message || '').includes(short);
    const update = updater.find((e) => e.reason === 'ImagesUpdated' && mentions(e));
    const found = updater.find((e) => e.reason === 'NewestTagFound' && mentions(e));
    const newest = found ? (/ is "([^"]*)"/.exec(found.message) || [])[1] || '' : '';
    const failure = updater.find((e) => e.type === 'Warning' && mentions(e));
    return h('tr', { class: 'image', 'data-image': name }, h('td', {}, alias || short), h('td', {}, name), h('td', {}, constraint || 'any'),
      h('td', {}, current.includes(':') ? current.slice(current.lastIndexOf(':') + 1) : current),
      h('td', { class: 'newest' }, newest),
      h('td', {}, update ? `${update.message} (${update.lastTimestamp || update.eventTime || ''})` : ''),
      h('td', { class: failure ? 'error-text' : '' }, failure ? `${failure.message} (${failure.lastTimestamp || failure.eventTime || ''})` : ''));
  });
  return h('section', { id: 'images' }, h('h2', {}, 'Images (image updater)'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Alias', 'Image', 'Constraint', 'Deployed tag', 'Newest allowed', 'Last update', 'Last error'].map((c) => h('th', {}, c)))),
      h('tbody', {}, rows)));
}

// syncWindowBlock tells whether the project's sync windows let the app
// sync now, and which windows apply.
function syncWindowBlock(w) {
  if (!w.assignedWindows || w.assignedWindows.length === 0) return '';
  const active = (w.activeWindows || []).map((x) => `${x.kind} ${x.schedule} for ${x.duration}`).join('; ');
  return h('p', { id: 'sync-window' }, 'Sync windows: ', statusBadge('window', w.canSync ? 'Sync allowed' : 'Sync denied'),
    active ? ` active: ${active}` : ' none active');
}

// hydratorBlock shows the source hydrator's last operation.
function hydratorBlock(hyd) {
  const op = hyd && hyd.currentOperation;
  if (!op) return '';
  const sha = (x) => (x || '').slice(0, 7);
  return h('p', { id: 'hydrator' }, 'Hydrator: ', statusBadge('hydrator', op.phase || 'Unknown'),
    op.drySHA ? [' dry ', h('code', {}, sha(op.drySHA))] : '', op.hydratedSHA ? [' → hydrated ', h('code', {}, sha(op.hydratedSHA))] : '',
    op.message ? ` ${op.message}` : '');
}

// conditionsBlock lists the app's conditions, errors first.
function conditionsBlock(conditions) {
  if (!conditions || conditions.length === 0) return '';
  const error = (c) => /Error$/.test(c.type);
  return h('ul', { id: 'conditions', class: 'plain conditions' }, conditions.slice().sort((a, b) => error(b) - error(a)).map((c) =>
    h('li', { class: 'condition ' + (error(c) ? 'error-text' : 'warning-text'), 'data-type': c.type },
      h('strong', {}, c.type), ': ', c.message || '', c.lastTransitionTime ? h('span', { class: 'count' }, ` (${c.lastTransitionTime})`) : '')));
}

// views are the ways an app's resources are shown, by the URL's view
// parameter as Argo CD names them.
const views = { tree: 'Tree', network: 'Network', pods: 'Pods', list: 'List' };

// resourceViews shows the app's resources in the view the URL names,
// with buttons switching between the views in place.
function resourceViews(app, resourceTree) {
  const st = app.status || {};
  const nodes = withSync(resourceTree.nodes || [], st.resources || []);
  const open = (n) => resourcePanel(app, n);
  const params = new URLSearchParams(location.search);
  const box = h('div', { id: 'resource-view' });
  const bar = h('div', { class: 'views', role: 'group', 'aria-label': 'Resources view' });
  const extensions = extensionViews(app);
  const all = { ...views, ...Object.fromEntries(extensions.map((e) => [e.key, e.title])) };
  const show = (view) => {
    const q = new URLSearchParams(location.search);
    if (view === 'tree') q.delete('view'); else q.set('view', view);
    history.replaceState(null, '', location.pathname + (q.toString() ? '?' + q : ''));
    bar.replaceChildren(...Object.entries(all).map(([v, label]) => h('button', { type: 'button', id: 'view-' + v,
      'aria-pressed': String(v === view), onclick: () => show(v) }, label)));
    const extension = extensions.find((e) => e.key === view);
    box.replaceChildren(extension ? mount(extension.component, { application: app, tree: resourceTree }, { id: 'extension-view' }) :
      view === 'network' ? network(nodes, open) :
      view === 'pods' ? pods(nodes, resourceTree.hosts, new URLSearchParams(location.search).get('podSortBy'), (by) => {
        const q2 = new URLSearchParams(location.search);
        q2.set('podSortBy', by);
        history.replaceState(null, '', location.pathname + '?' + q2);
        show('pods');
      }, open) :
      view === 'list' ? resourceList(app, open) :
      tree(app, nodes, resourceTree.orphanedNodes || [], open));
  };
  show(all[params.get('view')] ? params.get('view') : 'tree');
  return h('section', { class: 'resources' }, bar, box);
}

// resourceList is the list view: the app's resources with their status.
function resourceList(app, open) {
  const rows = ((app.status || {}).resources || []).map((res) => h('tr', { class: 'resource', 'data-kind': res.kind, 'data-name': res.name },
    h('td', {}, kindIcon(res.kind), ' ', res.kind), h('td', {}, res.namespace || ''),
    h('td', {}, h('button', { type: 'button', class: 'linkish', onclick: () => open(res) }, res.name)),
    h('td', {}, statusBadge('sync', res.status || 'Unknown')), h('td', {}, res.health ? statusBadge('health', res.health.status) : '')));
  return h('table', { id: 'resources' }, h('thead', {}, h('tr', {}, ['Kind', 'Namespace', 'Name', 'Sync', 'Health'].map((c) => h('th', {}, c)))),
    h('tbody', {}, rows));
}

export async function renderApp(user, r) {
  const app = await api(`api/v1/applications/${encodeURIComponent(r.app)}?appNamespace=${encodeURIComponent(r.namespace)}`);
  const [resourceTree, maySync, mayDelete, mayUpdate, windows] = await Promise.all([
    api(`${appPath(app)}/resource-tree?${appQuery(app)}`).catch(shown('The resource tree', { nodes: [] })),
    can('sync', app), can('delete', app), can('update', app),
    api(`${appPath(app)}/syncwindows?${appQuery(app)}`).catch(shown('The sync windows', {}))]);
  setTree(resourceTree);
  const kept = keptPanel(app, withSync(resourceTree.nodes || [], (app.status || {}).resources || []));
  const st = app.status || {};
  const op = st.operationState;
  const refresh = (kind) => async () => {
    try {
      await api(`${appPath(app)}?${appQuery(app)}&refresh=${kind}`);
    } catch (err) {
      showError(err);
    }
  };
  const history = (st.history || []).slice().reverse().map((hist) => h('tr', { class: 'history', 'data-id': String(hist.id) },
    h('td', {}, String(hist.id)), h('td', {}, h('code', {}, (hist.revision || '').slice(0, 7))), h('td', {}, hist.deployedAt || ''),
    h('td', {}, h('button', { type: 'button', class: 'rollback', disabled: !maySync, onclick: () => rollbackDialog(app, hist) }, 'Rollback'))));
  root.replaceChildren(header(user), h('main', { class: 'detail' },
    h('p', {}, link('applications', '← Applications')),
    h('div', { class: 'toolbar' }, h('h1', {}, app.metadata.name),
      h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' },
        h('button', { type: 'button', id: 'sync', disabled: !maySync, title: maySync ? null : 'You may not sync this application',
          onclick: () => syncDialog(app) }, 'Sync'),
        h('button', { type: 'button', id: 'refresh', onclick: refresh('normal') }, 'Refresh'),
        h('button', { type: 'button', id: 'hard-refresh', onclick: refresh('hard') }, 'Hard refresh'),
        h('button', { type: 'button', id: 'delete', disabled: !mayDelete, title: mayDelete ? null : 'You may not delete this application',
          onclick: () => deleteDialog(app) }, 'Delete'), actionButtons(app))),
    h('p', { id: 'app-status' }, statusBadge('health', (st.health && st.health.status) || 'Unknown'), ' ',
      statusBadge('sync', (st.sync && st.sync.status) || 'Unknown'),
      st.sync && st.sync.revision ? h('code', {}, ' ' + st.sync.revision.slice(0, 7)) : ''),
    statusBlocks(app),
    deepLinks('app-links', api(`${appPath(app)}/links?namespace=${encodeURIComponent(app.metadata.namespace)}`).catch(shown('The application\'s links', {}))),
    syncWindowBlock(windows),
    hydratorBlock(st.sourceHydrator),
    conditionsBlock(st.conditions),
    operationBlock(app, op, maySync),
    h('h2', {}, 'Resources'),
    resourceViews(app, resourceTree),
    kept || h('section', { id: 'panel', 'aria-live': 'polite' }),
    appDetails(app, mayUpdate, parametersForm(app, mayUpdate)),
    await imagesSection(app),
    h('h2', {}, 'History'),
    h('table', { id: 'history' }, h('thead', {}, h('tr', {}, ['ID', 'Revision', 'Deployed', ''].map((c) => h('th', {}, c)))),
      h('tbody', {}, history))));
  // A resource panel left open stays open through live updates.
  reopenPanel(app, kept);
  // Live updates redraw the page, but not over a form being edited.
  watchApplications(app.metadata.resourceVersion, () => {
    if (!document.querySelector('form[data-dirty]')) render();
  }, app.metadata.name);
}
