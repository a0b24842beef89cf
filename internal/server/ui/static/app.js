// Capstan's web UI: routes by the URL, draws with the DOM, and asks the
// API for everything (the session is the argocd.token cookie).

const root = document.getElementById('app');

// api calls the API under the page's base; a 401 sends the user to the
// login page and back here afterwards.
async function api(path, options = {}) {
  const resp = await fetch(path, { credentials: 'same-origin', ...options,
    headers: { 'Content-Type': 'application/json', ...(options.headers || {}) } });
  if (resp.status === 401 && route().name !== 'login') {
    const back = location.pathname.slice(base().length) + location.search;
    navigate('login?return_url=' + encodeURIComponent(back));
    throw new Error('session expired');
  }
  const text = await resp.text();
  const body = text ? JSON.parse(text) : {};
  if (!resp.ok) {
    throw new Error(body.message || body.error || resp.statusText);
  }
  return body;
}

function base() {
  return new URL(document.baseURI).pathname;
}

// route is where the URL points, relative to the base.
function route() {
  const rel = location.pathname.slice(base().length).replace(/\/+$/, '');
  const parts = rel.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'login') return { name: 'login' };
  if (parts[0] === 'applications' && parts[1] === 'new') return { name: 'new' };
  if (parts[0] === 'applications' && parts.length === 3) return { name: 'app', namespace: parts[1], app: parts[2] };
  if (parts[0] === 'applicationsets' && parts.length === 3) return { name: 'appset', namespace: parts[1], appset: parts[2] };
  if (parts[0] === 'applicationsets') return { name: 'appsets' };
  if (parts[0] === 'settings') return { name: ['clusters', 'projects', 'accounts'].includes(parts[1]) ? parts[1] : 'repositories' };
  return { name: 'applications' };
}

function navigate(rel, replace) {
  const url = new URL(rel, document.baseURI);
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  render();
}

// h makes an element: h('a', {href: 'x', onclick: f}, 'text', child…).
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c !== undefined && c !== null && c !== false) el.append(c);
  }
  return el;
}

// link is an in-app link that routes without a reload.
function link(rel, text, attrs = {}) {
  return h('a', { href: rel, ...attrs, onclick: (e) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    navigate(rel);
  } }, text);
}

let stopStream = () => {};

async function render() {
  stopStream();
  stopStream = () => {};
  const r = route();
  try {
    if (await show(r)) {
      // When each page was drawn, for the browser's performance timeline.
      performance.mark('capstan:' + r.name);
    }
  } catch (err) {
    if (err.message !== 'session expired') showError(err);
  }
}

// show draws the page r names; false when it sent the user elsewhere.
async function show(r) {
  if (r.name === 'login') return renderLogin().then(() => true);
  const user = await api('api/v1/session/userinfo');
  if (!user.loggedIn) {
    const back = location.pathname.slice(base().length) + location.search;
    navigate('login?return_url=' + encodeURIComponent(back), true);
    return false;
  }
  const pages = { app: renderApp, new: renderNewApp, repositories: renderRepositories, clusters: renderClusters,
    projects: renderProjects, accounts: renderAccounts, applications: renderApplications,
    appsets: renderAppSets, appset: renderAppSet };
  await pages[r.name](user, r);
  return true;
}

function showError(err) {
  let box = document.getElementById('error');
  if (!box) {
    box = h('div', { id: 'error', role: 'alert', class: 'error' });
    root.prepend(box);
  }
  box.textContent = err.message;
}

function header(user) {
  return h('header', { class: 'top' },
    link('applications', 'Capstan', { class: 'brand' }),
    h('nav', {}, link('applications', 'Applications'), ' ', link('applicationsets', 'ApplicationSets', { id: 'nav-appsets' }), ' ',
      link('settings/repositories', 'Settings', { id: 'nav-settings' })),
    h('span', { class: 'user' }, user.username,
      h('button', { type: 'button', id: 'logout', onclick: async () => {
        await fetch('api/v1/session', { method: 'DELETE', credentials: 'same-origin' });
        navigate('login');
      } }, 'Log out')));
}

// --- login -----------------------------------------------------------

async function renderLogin() {
  const params = new URLSearchParams(location.search);
  const back = params.get('return_url') || 'applications';
  const s = await settings();
  const user = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const pass = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const form = h('form', { class: 'login', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api('api/v1/session', { method: 'POST', body: JSON.stringify({ username: user.value, password: pass.value }) });
      navigate(safeReturn(back), true);
    } catch (err) {
      showError(err);
    }
  } },
  h('h1', {}, 'Capstan'),
  h('label', { for: 'username' }, 'Username'), user,
  h('label', { for: 'password' }, 'Password'), pass,
  h('button', { type: 'submit', id: 'sign-in' }, 'Sign in'),
  (s.oidcConfig || s.dexConfig) ?
    h('a', { class: 'button sso', href: 'auth/login?return_url=' + encodeURIComponent(base() + safeReturn(back)) },
      'Log in via ' + ((s.oidcConfig && s.oidcConfig.name) || 'SSO')) : null);
  root.replaceChildren(h('main', { class: 'center' }, form));
  user.focus();
}

// safeReturn keeps a return URL inside the UI.
function safeReturn(rel) {
  return /^[a-z]/.test(rel) && !rel.includes('//') ? rel : 'applications';
}

// --- applications list -------------------------------------------------

const filterKeys = ['search', 'project', 'sync', 'health', 'cluster', 'namespace', 'repo', 'selector'];

async function renderApplications(user) {
  const params = new URLSearchParams(location.search);
  const view = params.get('view') === 'list' ? 'list' : 'tiles';
  const query = new URLSearchParams();
  for (const k of filterKeys) for (const v of params.getAll(k)) query.append(k, v);
  query.set('offset', params.get('offset') || '0');
  query.set('limit', '60');
  const page = await api('api/v1/ui/applications?' + query);

  const set = (key, values) => {
    const next = new URLSearchParams(location.search);
    next.delete(key);
    next.delete('offset');
    for (const v of [].concat(values)) if (v) next.append(key, v);
    navigate('applications?' + next, true);
  };
  const search = h('input', { id: 'search', type: 'search', placeholder: 'Search by name', 'aria-label': 'Search applications by name',
    value: params.get('search') || '' });
  let timer;
  search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => set('search', search.value), 300); });

  const select = (key, label, values) => h('label', { class: 'facet' }, label,
    h('select', { id: 'filter-' + key, 'aria-label': label, onchange: (e) => set(key, e.target.value) },
      h('option', { value: '' }, 'All'),
      (values || []).map((v) => h('option', { value: v, selected: params.get(key) === v }, v))));

  const statusBoxes = (key, label, counts) => h('fieldset', { class: 'statuses', id: 'filter-' + key }, h('legend', {}, label),
    Object.keys(counts).sort().map((s) => h('label', {},
      h('input', { type: 'checkbox', value: s, checked: params.getAll(key).includes(s), onchange: (e) => {
        const chosen = new Set(params.getAll(key));
        if (e.target.checked) chosen.add(s); else chosen.delete(s);
        set(key, [...chosen]);
      } }), ' ', h('span', { class: 'status ' + s.toLowerCase() }, s), ' ', h('span', { class: 'count' }, String(counts[s])))));

  const selector = h('input', { id: 'filter-selector', type: 'search', placeholder: 'Labels, e.g. team=web', 'aria-label': 'Filter by labels',
    value: params.get('selector') || '', onchange: (e) => set('selector', e.target.value) });
  const filters = h('aside', { class: 'filters', 'aria-label': 'Filters' },
    search, selector,
    statusBoxes('sync', 'Sync status', page.counts.sync),
    statusBoxes('health', 'Health status', page.counts.health),
    select('project', 'Project', page.facets.projects),
    select('cluster', 'Cluster', page.facets.clusters),
    select('namespace', 'Namespace', page.facets.namespaces),
    select('repo', 'Repository', page.facets.repos),
    h('button', { type: 'button', id: 'clear-filters', onclick: () => navigate('applications' + (view === 'list' ? '?view=list' : ''), true) }, 'Clear filters'));

  const items = page.items.map((a) => appCard(a, view));
  const offset = page.offset;
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('span', { id: 'total' }, page.total === 0 ? 'No applications' :
      `${offset + 1}–${offset + page.items.length} of ${page.total} applications`),
    offset > 0 ? h('button', { type: 'button', onclick: () => set('offset', String(Math.max(0, offset - 60))) }, 'Previous') : null,
    offset + page.items.length < page.total ? h('button', { type: 'button', onclick: () => set('offset', String(offset + 60)) }, 'Next') : null);

  const toggle = h('div', { class: 'views', role: 'group', 'aria-label': 'View' },
    ['tiles', 'list'].map((v) => h('button', { type: 'button', 'aria-pressed': String(v === view), id: 'view-' + v,
      onclick: () => set('view', v === 'tiles' ? '' : v) }, v === 'tiles' ? 'Tiles' : 'List')));

  root.replaceChildren(header(user), h('div', { class: 'layout' }, filters,
    h('main', {}, h('div', { class: 'toolbar' }, h('h1', {}, 'Applications'),
      h('div', { class: 'actions' }, link('applications/new', 'New app', { class: 'button', id: 'new-app' }), toggle)), pager,
      h(view === 'list' ? 'table' : 'div', { id: 'apps', class: view }, view === 'list' ?
        [h('thead', {}, h('tr', {}, ['Name', 'Project', 'Sync', 'Health', 'Repository', 'Destination'].map((c) => h('th', {}, c)))), h('tbody', {}, items)] :
        items))));
  watchApplications(page.resourceVersion, () => render());
}

function statusBadge(kind, status) {
  return h('span', { class: 'status ' + String(status).toLowerCase(), ['data-' + kind]: status }, status);
}

function appCard(a, view) {
  const rel = `applications/${encodeURIComponent(a.namespace)}/${encodeURIComponent(a.name)}`;
  const dest = `${a.cluster}${a.destNamespace ? ' / ' + a.destNamespace : ''}`;
  if (view === 'list') {
    return h('tr', { class: 'app', 'data-app': a.name },
      h('td', {}, link(rel, a.name)), h('td', {}, a.project), h('td', {}, statusBadge('sync', a.sync)),
      h('td', {}, statusBadge('health', a.health)), h('td', {}, a.repo), h('td', {}, dest));
  }
  return h('article', { class: 'app tile', 'data-app': a.name },
    h('h2', {}, link(rel, a.name)),
    h('p', {}, statusBadge('health', a.health), ' ', statusBadge('sync', a.sync), a.operation === 'Running' ? ' syncing…' : ''),
    h('dl', {}, h('dt', {}, 'Project'), h('dd', {}, a.project),
      h('dt', {}, 'Repository'), h('dd', {}, a.repo),
      h('dt', {}, a.chart ? 'Chart' : 'Path'), h('dd', {}, a.chart || a.path || '.'),
      h('dt', {}, 'Destination'), h('dd', {}, dest)));
}

// newestSeen is the newest resource version the event stream has shown,
// across redraws: a page drawn from an older list does not hear the same
// change twice.
let newestSeen = 0;

// watchApplications follows the event stream from resourceVersion and
// calls changed (at most every half second) when an Application changes
// after it.
function watchApplications(resourceVersion, changed, name) {
  const from = Math.max(Number(resourceVersion) || 0, newestSeen);
  const q = new URLSearchParams(from ? { resourceVersion: String(from) } : {});
  if (name) q.set('name', name);
  const es = new EventSource('api/v1/stream/applications?' + q);
  let timer;
  es.onmessage = (e) => {
    const app = (JSON.parse(e.data).result || {}).application || {};
    const version = Number((app.metadata || {}).resourceVersion) || 0;
    if (version && version <= from) return; // what the page shows already
    newestSeen = Math.max(newestSeen, version);
    clearTimeout(timer);
    timer = setTimeout(() => { es.close(); changed(); }, 500);
  };
  const prev = stopStream;
  stopStream = () => { clearTimeout(timer); es.close(); prev(); };
}

// --- one application ---------------------------------------------------

let settingsOnce;

// settings are the API's public settings, read once per page load.
function settings() {
  settingsOnce = settingsOnce || api('api/v1/settings').catch(() => ({}));
  return settingsOnce;
}

// can asks the API whether the user may do action on the app, named as
// RBAC names it: <project>/<name>, or <project>/<namespace>/<name>
// outside the control namespace.
async function can(action, app, resource = 'applications') {
  const s = await settings();
  const project = app.spec.project || 'default';
  const object = app.metadata.namespace === s.controllerNamespace ?
    `${project}/${app.metadata.name}` : `${project}/${app.metadata.namespace}/${app.metadata.name}`;
  try {
    const r = await api(`api/v1/account/can-i/${resource}/${action}/${object.split('/').map(encodeURIComponent).join('/')}`);
    return r.value === 'yes';
  } catch (e) {
    return false;
  }
}

function appPath(app) {
  return `api/v1/applications/${encodeURIComponent(app.metadata.name)}`;
}

function appQuery(app) {
  return 'appNamespace=' + encodeURIComponent(app.metadata.namespace);
}

// resourceKey names a resource node or status entry uniquely.
function resourceKey(n) {
  return `${n.group || ''}/${n.kind}/${n.namespace || ''}/${n.name}`;
}

// tree draws the resource tree: each node under its parents (a Pod under
// its ReplicaSet under its Deployment), the app's own resources at the top.
function tree(nodes, onSelect, rootName) {
  const key = resourceKey;
  const byKey = new Map(nodes.map((n) => [key(n), n]));
  const children = new Map();
  const roots = [];
  for (const n of nodes) {
    const parents = (n.parentRefs || []).map(key).filter((k) => byKey.has(k));
    if (parents.length === 0) roots.push(n);
    for (const p of parents) {
      if (!children.has(p)) children.set(p, []);
      children.get(p).push(n);
    }
  }
  const byName = (a, b) => (a.kind + a.name).localeCompare(b.kind + b.name);
  const draw = (n, seen) => {
    const k = key(n);
    if (seen.has(k)) return null;
    seen.add(k);
    const kids = (children.get(k) || []).sort(byName).map((c) => draw(c, new Set(seen))).filter(Boolean);
    return h('li', { class: 'node', 'data-kind': n.kind, 'data-name': n.name },
      h('span', { class: 'box' }, h('span', { class: 'kind' }, n.kind), ' ',
        h('button', { type: 'button', class: 'linkish name', onclick: () => onSelect(n) }, n.name), ' ',
        n.health ? statusBadge('health', n.health.status) : '', n.sync ? statusBadge('sync', n.sync) : ''),
      kids.length ? h('ul', {}, kids) : '');
  };
  return h('ul', { id: 'tree', class: 'tree', 'aria-label': 'Resource tree' }, h('li', { class: 'node root' },
    h('span', { class: 'box' }, h('span', { class: 'kind' }, 'Application'), ' ', h('span', { class: 'name' }, rootName)),
    h('ul', {}, roots.sort(byName).map((n) => draw(n, new Set())))));
}

// withSync adds each managed resource's sync status to its tree node.
function withSync(nodes, resources) {
  const key = resourceKey;
  const status = new Map(resources.map((r) => [key(r), r.status]));
  return nodes.map((n) => status.has(key(n)) ? { ...n, sync: status.get(key(n)) } : n);
}

// dialog opens a modal with a form; submit gets the form's elements.
function dialog(title, fields, action, submit) {
  const form = h('form', { method: 'dialog', class: 'dialog-form' },
    h('h2', {}, title), fields,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', value: 'ok', id: 'dialog-ok' }, action),
      h('button', { type: 'button', id: 'dialog-cancel', onclick: () => d.close() }, 'Cancel')));
  const d = h('dialog', { 'aria-label': title }, form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await submit(form.elements);
      d.close();
    } catch (err) {
      showError(err);
      d.close();
    }
  });
  d.addEventListener('close', () => d.remove());
  document.body.append(d);
  d.showModal();
}

function check(name, label, checked) {
  return h('label', { class: 'check' }, h('input', { type: 'checkbox', name, id: 'opt-' + name, checked }), ' ', label);
}

function syncDialog(app) {
  dialog('Synchronize ' + app.metadata.name, [
    h('label', { for: 'opt-revision' }, 'Revision'),
    h('input', { id: 'opt-revision', name: 'revision', value: (app.spec.source && app.spec.source.targetRevision) || 'HEAD' }),
    check('prune', 'Prune'), check('dryRun', 'Dry run'), check('applyOutOfSyncOnly', 'Apply out of sync only'),
    check('force', 'Force'), check('replace', 'Replace'), check('serverSideApply', 'Server-side apply'),
    h('fieldset', { class: 'sync-resources' }, h('legend', {}, 'Resources'),
      ((app.status || {}).resources || []).map((r, i) => h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: 'resource', value: String(i), id: `sync-resource-${r.kind}-${r.name}`, checked: true }), ' ',
        `${r.kind} ${r.namespace ? r.namespace + '/' : ''}${r.name}`))),
  ], 'Synchronize', async (el) => {
    const items = [];
    if (el.applyOutOfSyncOnly.checked) items.push('ApplyOutOfSyncOnly=true');
    if (el.replace.checked) items.push('Replace=true');
    if (el.serverSideApply.checked) items.push('ServerSideApply=true');
    const body = { revision: el.revision.value, prune: el.prune.checked, dryRun: el.dryRun.checked,
      syncOptions: { items }, appNamespace: app.metadata.namespace };
    if (el.force.checked) body.strategy = { apply: { force: true } };
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
    const lines = (v) => v.split('\n').map((l) => l.trim()).filter(Boolean);
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
  const events = await api(`${appPath(app)}/events?${appQuery(app)}`).then((e) => e.items || []).catch(() => []);
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

// openPanel is the resource panel open on the page, kept across redraws.
let openPanel = null;

// resourcePanel shows one resource: its diff (desired against live, side
// by side or unified), its live and desired manifests, and a Pod's logs.
async function resourcePanel(app, res, tab = 'diff') {
  openPanel = { app: app.metadata.name, res, tab };
  const panel = document.getElementById('panel');
  if (!panel) return;
  const exec = res.kind === 'Pod' && (await settings()).execEnabled && await can('create', app, 'exec');
  const tabs = ['diff', 'live', 'desired', 'events'].concat(res.kind === 'Pod' ? ['logs'] : [], exec ? ['terminal'] : []);
  const body = h('div', { class: 'panel-body' });
  panel.replaceChildren(h('div', { class: 'toolbar' }, h('h2', {}, `${res.kind} ${res.name}`),
    h('div', { class: 'actions', role: 'tablist' }, tabs.map((t) => h('button', { type: 'button', role: 'tab', id: 'tab-' + t,
      'aria-selected': String(t === tab), onclick: () => resourcePanel(app, res, t) }, { diff: 'Diff', live: 'Live manifest', desired: 'Desired manifest', events: 'Events', logs: 'Logs', terminal: 'Terminal' }[t])),
    h('button', { type: 'button', id: 'resource-actions', onclick: () => actionsDialog(app, res) }, 'Actions'),
    h('button', { type: 'button', id: 'delete-resource', onclick: () => deleteResourceDialog(app, res) }, 'Delete'),
    h('button', { type: 'button', id: 'close-panel', onclick: () => { openPanel = null; panel.replaceChildren(); } }, 'Close'))), body);
  if (tab === 'logs') return streamLogs(app, res, body);
  if (tab === 'terminal') return openTerminal(app, res, body);
  if (tab === 'events') return showEvents(app, res, body);
  const q = new URLSearchParams({ appNamespace: app.metadata.namespace, kind: res.kind, name: res.name, namespace: res.namespace || '', group: res.group || '' });
  const found = await api(`${appPath(app)}/managed-resources?${q}`);
  const d = (found.items || [])[0] || {};
  const yaml = (text) => text ? JSON.stringify(JSON.parse(text), null, 2) : '';
  const live = yaml(d.normalizedLiveState || d.liveState), desired = yaml(d.predictedLiveState || d.targetState);
  if (tab === 'live') return body.replaceChildren(h('pre', { id: 'manifest' }, yaml(d.liveState)));
  if (tab === 'desired') return body.replaceChildren(h('pre', { id: 'manifest' }, yaml(d.targetState)));
  const unified = localStorage.getItem('diff') !== 'split';
  body.replaceChildren(h('div', { class: 'actions' },
    h('label', { class: 'check' }, h('input', { type: 'checkbox', id: 'diff-split', checked: !unified, onchange: (e) => {
      localStorage.setItem('diff', e.target.checked ? 'split' : 'unified');
      resourcePanel(app, res, 'diff');
    } }), ' Side by side')),
  diffView(live, desired, unified));
}

// diffView shows the lines of a (live) against b (desired): removed lines
// red, added green, from a longest-common-subsequence of the lines.
function diffView(a, b, unified) {
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
    return h('pre', { id: 'diff', class: 'diff' + (changed ? ' changed' : '') }, rows.map(([k, l, r]) =>
      h('div', { class: k }, k === 'add' ? '+ ' + r : k === 'del' ? '- ' + l : '  ' + l)));
  }
  return h('table', { id: 'diff', class: 'diff split' + (changed ? ' changed' : '') }, h('tbody', {}, rows.map(([k, l, r]) =>
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

// actionsDialog offers the resource's actions (restart, suspend, …).
async function actionsDialog(app, res) {
  const found = await api(`${appPath(app)}/resource/actions?${resourceQuery(app, res)}`);
  const actions = (found.actions || []).filter((a) => !a.disabled);
  if (actions.length === 0) return showError(new Error(`${res.kind} ${res.name} has no actions`));
  dialog(`Run an action on ${res.kind} ${res.name}`, actions.map((a, i) => h('label', { class: 'check' },
    h('input', { type: 'radio', name: 'action', value: a.name, id: 'action-' + a.name, checked: i === 0 }), ' ', a.displayName || a.name)),
  'Run', async (el) => {
    const q = resourceQuery(app, res);
    await api(`${appPath(app)}/resource/actions/v2`, { method: 'POST', body: JSON.stringify({
      name: app.metadata.name, appNamespace: app.metadata.namespace, namespace: res.namespace || '', resourceName: res.name,
      version: q.get('version'), group: res.group || '', kind: res.kind, action: el.action.value }) });
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

// streamLogs follows a Pod's logs into box until the panel changes.
function streamLogs(app, res, box) {
  const out = h('pre', { id: 'logs', class: 'logs' });
  box.replaceChildren(out);
  const q = new URLSearchParams({ appNamespace: app.metadata.namespace, podName: res.name, namespace: res.namespace || '',
    container: '', follow: 'true', tailLines: '500' });
  const es = new EventSource(`${appPath(app)}/logs?${q}`);
  es.onmessage = (e) => {
    const r = JSON.parse(e.data).result || {};
    if (r.last) { es.close(); return; }
    out.append((r.content || '') + '\n');
    if (out.childNodes.length > 5000) out.firstChild.remove();
  };
  const stop = stopStream;
  stopStream = () => { es.close(); stop(); };
}

// openTerminal opens a shell in a container of the Pod (Argo CD's web
// terminal, when argocd-cm's exec.enabled and RBAC's exec allow it): what
// is typed in the line below goes to the shell, what it prints shows
// above, until the panel changes.
async function openTerminal(app, res, box) {
  const live = await api(`${appPath(app)}/resource?${resourceQuery(app, { ...res, version: res.version || 'v1' })}`).catch(() => ({}));
  const containers = ((JSON.parse(live.manifest || '{}').spec || {}).containers || []).map((c) => c.name);
  const out = h('pre', { id: 'terminal-output', class: 'logs', 'aria-live': 'polite' });
  const pick = h('select', { id: 'terminal-container', 'aria-label': 'Container' }, containers.map((c) => h('option', { value: c }, c)));
  const line = h('input', { id: 'terminal-input', 'aria-label': 'Command', autocomplete: 'off' });
  box.replaceChildren(h('div', { class: 'actions' }, h('label', {}, 'Container ', pick)), out, line);
  let ws;
  const connect = () => {
    if (ws) ws.close();
    out.replaceChildren();
    const q = new URLSearchParams({ pod: res.name, container: pick.value, appName: app.metadata.name,
      appNamespace: app.metadata.namespace, projectName: app.spec.project || 'default', namespace: res.namespace || '' });
    const url = new URL(`terminal?${q}`, document.baseURI);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    ws = new WebSocket(url);
    ws.onopen = () => {
      out.dataset.state = 'open';
      ws.send(JSON.stringify({ operation: 'resize', rows: 24, cols: 100 }));
    };
    // Escape sequences (colours, cursor moves) are dropped: the output is plain text.
    ws.onmessage = (e) => out.append(JSON.parse(e.data).data.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r/g, ''));
    ws.onclose = () => { out.dataset.state = 'closed'; out.append('\n[session ended]\n'); };
  };
  pick.onchange = connect;
  line.onkeydown = (e) => {
    if (e.key !== 'Enter' || !ws || ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify({ operation: 'stdin', data: line.value + '\n' }));
    line.value = '';
  };
  connect();
  line.focus();
  const stop = stopStream;
  stopStream = () => { ws.close(); stop(); };
}

async function renderApp(user, r) {
  const app = await api(`api/v1/applications/${encodeURIComponent(r.app)}?appNamespace=${encodeURIComponent(r.namespace)}`);
  const [resourceTree, maySync, mayDelete, mayUpdate] = await Promise.all([
    api(`${appPath(app)}/resource-tree?${appQuery(app)}`).catch(() => ({ nodes: [] })),
    can('sync', app), can('delete', app), can('update', app)]);
  const st = app.status || {};
  const op = st.operationState;
  const refresh = (kind) => async () => {
    try {
      await api(`${appPath(app)}?${appQuery(app)}&refresh=${kind}`);
    } catch (err) {
      showError(err);
    }
  };
  const resources = (st.resources || []).map((res) => h('tr', { class: 'resource', 'data-kind': res.kind, 'data-name': res.name },
    h('td', {}, res.kind), h('td', {}, res.namespace || ''),
    h('td', {}, h('button', { type: 'button', class: 'linkish', onclick: () => resourcePanel(app, res) }, res.name)),
    h('td', {}, statusBadge('sync', res.status || 'Unknown')), h('td', {}, res.health ? statusBadge('health', res.health.status) : '')));
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
          onclick: () => deleteDialog(app) }, 'Delete'))),
    h('p', { id: 'app-status' }, statusBadge('health', (st.health && st.health.status) || 'Unknown'), ' ',
      statusBadge('sync', (st.sync && st.sync.status) || 'Unknown'),
      st.sync && st.sync.revision ? h('code', {}, ' ' + st.sync.revision.slice(0, 7)) : ''),
    operationBlock(app, op, maySync),
    h('h2', {}, 'Resources'),
    tree(withSync(resourceTree.nodes || [], st.resources || []), (n) => resourcePanel(app, n), app.metadata.name),
    h('table', { id: 'resources' }, h('thead', {}, h('tr', {}, ['Kind', 'Namespace', 'Name', 'Sync', 'Health'].map((c) => h('th', {}, c)))),
      h('tbody', {}, resources)),
    h('section', { id: 'panel', 'aria-live': 'polite' }),
    parametersForm(app, mayUpdate),
    await imagesSection(app),
    h('h2', {}, 'History'),
    h('table', { id: 'history' }, h('thead', {}, h('tr', {}, ['ID', 'Revision', 'Deployed', ''].map((c) => h('th', {}, c)))),
      h('tbody', {}, history))));
  // A resource panel left open stays open through live updates.
  if (openPanel && openPanel.app === app.metadata.name) resourcePanel(app, openPanel.res, openPanel.tab);
  // Live updates redraw the page, but not over parameters being edited.
  watchApplications(app.metadata.resourceVersion, () => {
    if (!document.querySelector('#parameters[data-dirty]')) render();
  }, app.metadata.name);
}

// --- a new application ----------------------------------------------------

const appTemplate = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
spec:
  project: default
  source:
    repoURL: https://github.com/argoproj/argocd-example-apps.git
    path: guestbook
    targetRevision: HEAD
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
`;

async function renderNewApp(user) {
  const projects = await api('api/v1/projects').then((p) => (p.items || []).map((x) => x.metadata.name)).catch(() => ['default']);
  const field = (id, label, attrs = {}) => [h('label', { for: id }, label), h('input', { id, name: id, ...attrs })];
  const mode = new URLSearchParams(location.search).get('mode') === 'yaml' ? 'yaml' : 'form';
  const created = (app) => navigate(`applications/${encodeURIComponent(app.metadata.namespace)}/${encodeURIComponent(app.metadata.name)}`);
  const form = h('form', { id: 'new-app-form', class: 'dialog-form wide', onsubmit: async (e) => {
    e.preventDefault();
    const el = form.elements;
    try {
      if (mode === 'yaml') {
        created(await api('api/v1/applications', { method: 'POST', body: el.yaml.value, headers: { 'Content-Type': 'application/yaml' } }));
        return;
      }
      const source = { repoURL: el.repo.value, targetRevision: el.revision.value || 'HEAD' };
      if (el.chart.value) source.chart = el.chart.value; else source.path = el.path.value || '.';
      const app = { metadata: { name: el.name.value }, spec: { project: el.project.value, source,
        destination: { server: el.cluster.value, namespace: el.namespace.value } } };
      const options = el.createNamespace.checked ? ['CreateNamespace=true'] : [];
      if (el.autoSync.checked || options.length) {
        app.spec.syncPolicy = { syncOptions: options };
        if (el.autoSync.checked) app.spec.syncPolicy.automated = { prune: el.prune.checked, selfHeal: el.selfHeal.checked };
      }
      created(await api('api/v1/applications', { method: 'POST', body: JSON.stringify(app) }));
    } catch (err) {
      showError(err);
    }
  } },
  mode === 'yaml' ? [h('label', { for: 'yaml' }, 'Application (YAML or JSON)'),
    h('textarea', { id: 'yaml', name: 'yaml', rows: '18', spellcheck: 'false' }, appTemplate)] : [
    field('name', 'Name', { required: true }),
    h('label', { for: 'project' }, 'Project'), h('select', { id: 'project', name: 'project' }, projects.map((p) => h('option', { value: p }, p))),
    field('repo', 'Repository URL', { required: true }), field('revision', 'Revision', { value: 'HEAD' }),
    field('path', 'Path'), field('chart', 'Helm chart (instead of a path)'),
    field('cluster', 'Cluster URL', { value: 'https://kubernetes.default.svc', required: true }), field('namespace', 'Namespace', { required: true }),
    check('autoSync', 'Automated sync'), check('prune', 'Prune (automated)'), check('selfHeal', 'Self heal (automated)'),
    check('createNamespace', 'Create the namespace')],
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'create' }, 'Create'), link('applications', 'Cancel', { class: 'button' })));
  root.replaceChildren(header(user), h('main', { class: 'detail' },
    h('div', { class: 'toolbar' }, h('h1', {}, 'New application'),
      h('div', { class: 'views', role: 'group', 'aria-label': 'How' }, ['form', 'yaml'].map((m) => h('button', { type: 'button',
        id: 'mode-' + m, 'aria-pressed': String(m === mode), onclick: () => navigate('applications/new' + (m === 'yaml' ? '?mode=yaml' : ''), true) },
      m === 'yaml' ? 'YAML' : 'Form')))), form));
}

// --- repositories -------------------------------------------------------------

async function renderRepositories(user) {
  const [repos, creds] = await Promise.all([api('api/v1/repositories'), api('api/v1/repocreds').catch(() => ({ items: [] }))]);
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('repositories'),
    h('h1', {}, 'Repositories'), repoTable('repositories', 'api/v1/repositories', repos.items || [], true),
    repoForm('repo', 'Connect a repository', 'api/v1/repositories', true),
    h('h1', {}, 'Credential templates'),
    h('p', {}, 'Credentials for every repository whose URL starts with the template\'s.'),
    repoTable('repocreds', 'api/v1/repocreds', creds.items || [], false),
    repoForm('creds', 'Add a credential template', 'api/v1/repocreds', false)));
}

// repoTable lists repositories (with their connection state) or
// credential templates, each with a Remove button.
function repoTable(id, path, items, withState) {
  const rows = items.map((r) => h('tr', { class: 'repo', 'data-repo': r.url || r.repo },
    h('td', {}, r.url || r.repo), h('td', {}, r.type || 'git'), h('td', {}, r.name || r.username || ''),
    withState ? h('td', {}, statusBadge('connection', (r.connectionState && r.connectionState.status) || 'Unknown')) : '',
    h('td', {}, h('button', { type: 'button', class: 'remove', onclick: () => dialog('Remove ' + (r.url || r.repo),
      [h('p', {}, withState ? 'Applications using it stop syncing.' : 'Repositories it served need credentials of their own.')],
      'Remove', async () => {
        await api(`${path}/${encodeURIComponent(r.url || r.repo)}`, { method: 'DELETE' });
        render();
      }) }, 'Remove'))));
  return h('table', { id }, h('thead', {}, h('tr', {}, ['URL', 'Type', withState ? 'Name' : 'Username'].concat(withState ? ['Connection'] : [], ['']).map((c) => h('th', {}, c)))),
    h('tbody', {}, rows));
}

// repoForm adds a repository (its connection testable first) or a
// credential template.
function repoForm(prefix, title, path, testable) {
  const result = h('p', { id: prefix + '-connection-result', role: 'status' });
  const el = (name) => form.elements[prefix + '-' + name];
  const body = () => ({ repo: el('url').value, url: el('url').value, type: el('type').value, name: (el('name') && el('name').value) || undefined,
    username: el('username').value || undefined, password: el('password').value || undefined, insecure: el('insecure').checked || undefined });
  const input = (name, label, attrs = {}) => [h('label', { for: prefix + '-' + name }, label), h('input', { id: prefix + '-' + name, name: prefix + '-' + name, ...attrs })];
  const form = h('form', { id: prefix + '-form', class: 'dialog-form repo-form', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api(path, { method: 'POST', body: JSON.stringify(body()) });
      render();
    } catch (err) {
      showError(err);
    }
  } },
  h('h2', {}, title),
  input('url', testable ? 'URL' : 'URL prefix', { required: true }),
  h('label', { for: prefix + '-type' }, 'Type'), h('select', { id: prefix + '-type', name: prefix + '-type' }, h('option', { value: 'git' }, 'git'), h('option', { value: 'helm' }, 'helm')),
  testable ? input('name', 'Name (Helm)') : '',
  input('username', 'Username', { autocomplete: 'off' }),
  input('password', 'Password', { type: 'password', autocomplete: 'new-password' }),
  h('label', { class: 'check' }, h('input', { type: 'checkbox', name: prefix + '-insecure', id: prefix + '-insecure' }), ' Skip server verification'),
  h('div', { class: 'actions' },
    testable ? h('button', { type: 'button', id: prefix + '-test', onclick: async () => {
      result.textContent = 'Testing…';
      try {
        await api(`api/v1/repositories/${encodeURIComponent(el('url').value)}/validate`, { method: 'POST', body: JSON.stringify(body()) });
        result.textContent = 'Connection successful';
      } catch (err) {
        result.textContent = 'Connection failed: ' + err.message;
      }
    } }, 'Test connection') : '',
    h('button', { type: 'submit', id: prefix + '-submit' }, testable ? 'Connect' : 'Add')), result);
  return form;
}

// settingsNav links the settings pages, the current one marked.
function settingsNav(current) {
  return h('nav', { class: 'tabs', 'aria-label': 'Settings' }, ['repositories', 'clusters', 'projects', 'accounts'].map((p) =>
    link('settings/' + p, p[0].toUpperCase() + p.slice(1), { id: 'nav-' + p, 'aria-current': p === current ? 'page' : null })));
}

// table is a simple table of rows (arrays of cells), with a class per row.
function table(id, head, rows, rowClass) {
  return h('table', { id }, h('thead', {}, h('tr', {}, head.map((c) => h('th', {}, c)))),
    h('tbody', {}, rows.map((cells) => h('tr', { class: rowClass }, cells.map((c) => h('td', {}, c))))));
}

async function renderClusters(user) {
  const list = await api('api/v1/clusters');
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('clusters'), h('h1', {}, 'Clusters'),
    table('clusters', ['Name', 'Server', 'Version', 'Connection', ''], (list.items || []).map((c) => [c.name || '', c.server,
      (c.info && c.info.serverVersion) || c.serverVersion || '',
      statusBadge('connection', (c.info && c.info.connectionState && c.info.connectionState.status) || (c.connectionState && c.connectionState.status) || 'Unknown'),
      h('button', { type: 'button', class: 'remove', 'aria-label': `Remove cluster ${c.name || c.server}`, onclick: () =>
        dialog(`Remove cluster ${c.name || c.server}?`, [h('p', {}, 'Its applications stay, unable to sync until it is added again.')], 'Remove',
          () => call(`api/v1/clusters/${encodeURIComponent(c.server)}`, { method: 'DELETE' })) }, 'Remove')]), 'cluster')));
}

// tokenShown shows a new token once, to be copied.
function tokenShown(token) {
  dialog('New token', [h('p', {}, 'Copy it now: it is not shown again.'), h('textarea', { id: 'new-token', rows: '4', readonly: true }, token)], 'Done', async () => {});
}

// call runs an API call that changes something, then redraws the page;
// a refusal shows the API's message.
async function call(path, options) {
  try {
    const out = await api(path, options);
    render();
    return out;
  } catch (err) {
    showError(err);
  }
}

// lines splits a textarea's text into its non-empty lines.
function lines(text) {
  return text.split('\n').map((l) => l.trim()).filter(Boolean);
}

async function renderProjects(user) {
  const list = await api('api/v1/projects');
  const projectPath = (p) => `api/v1/projects/${encodeURIComponent(p.metadata.name)}`;
  // saveRoles changes the project's roles and writes it back, failing
  // rather than overwriting when it changed meanwhile.
  const saveRoles = async (p, change) => {
    const fresh = await api(projectPath(p));
    fresh.spec.roles = change(fresh.spec.roles || []);
    return call(projectPath(p), { method: 'PUT', body: JSON.stringify({ project: fresh }) });
  };
  const roleDialog = (p, role) => dialog(role ? `Role ${role.name}` : `New role in ${p.metadata.name}`, [
    h('label', {}, 'Name', h('input', { name: 'name', required: true, value: role ? role.name : '', readonly: !!role })),
    h('label', {}, 'Description', h('input', { name: 'description', value: (role && role.description) || '' })),
    h('label', {}, 'Policies, one per line', h('textarea', { name: 'policies', rows: '4',
      placeholder: `p, proj:${p.metadata.name}:ROLE, applications, get, ${p.metadata.name}/*, allow` }, ((role && role.policies) || []).join('\n'))),
    h('label', {}, 'Groups, one per line', h('textarea', { name: 'groups', rows: '2' }, ((role && role.groups) || []).join('\n')))],
  'Save', (f) => saveRoles(p, (roles) => {
    const next = { ...(roles.find((r) => r.name === f.name.value) || {}), name: f.name.value, description: f.description.value,
      policies: lines(f.policies.value), groups: lines(f.groups.value) };
    return [...roles.filter((r) => r.name !== next.name), next];
  }));
  const button = (text, cls, onclick, attrs = {}) => h('button', { type: 'button', class: cls, onclick, ...attrs }, text);
  const sections = (list.items || []).map((p) => {
    const rolePath = (role) => `${projectPath(p)}/roles/${encodeURIComponent(role.name)}`;
    const rows = (p.spec.roles || []).map((role) => [role.name, role.description || '',
      h('ul', { class: 'plain' }, (role.policies || []).map((pol) => h('li', {}, h('code', {}, pol)))),
      (role.groups || []).join(', '),
      h('ul', { class: 'plain' }, (role.jwtTokens || []).map((t) => h('li', { class: 'token' }, `${t.id || t.iat} issued ${new Date(t.iat * 1000).toISOString()} `,
        button('Revoke', 'revoke', () => call(`${rolePath(role)}/token/${t.iat}?id=${encodeURIComponent(t.id || '')}`, { method: 'DELETE' }),
          { 'aria-label': `Revoke token ${t.id || t.iat}` })))),
      h('div', { class: 'actions' },
        button('New token', 'new-token', async () => {
          const t = await call(`${rolePath(role)}/token`, { method: 'POST', body: '{}' });
          if (t) tokenShown(t.token);
        }),
        button('Edit', 'edit-role', () => roleDialog(p, role)),
        button('Delete', 'delete-role', () => saveRoles(p, (roles) => roles.filter((r) => r.name !== role.name))))]);
    return h('section', { class: 'project', 'data-project': p.metadata.name },
      h('div', { class: 'toolbar' }, h('h2', {}, p.metadata.name), button('Add role', 'add-role', () => roleDialog(p))),
      p.spec.description ? h('p', {}, p.spec.description) : '',
      table('roles-' + p.metadata.name, ['Role', 'Description', 'Policies', 'Groups', 'Tokens', ''], rows, 'role'));
  });
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('projects'), h('h1', {}, 'Projects'), sections));
}

async function renderAccounts(user) {
  const list = await api('api/v1/account');
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('accounts'), h('h1', {}, 'Accounts'),
    table('accounts', ['Name', 'Enabled', 'Capabilities', 'Tokens', ''], (list.items || []).map((a) => [a.name, a.enabled ? 'yes' : 'no',
      (a.capabilities || []).join(', '), String((a.tokens || []).length),
      (a.capabilities || []).includes('apiKey') ? h('button', { type: 'button', class: 'new-token', 'data-account': a.name, onclick: async () => {
        const t = await call(`api/v1/account/${encodeURIComponent(a.name)}/token`, { method: 'POST', body: '{}' });
        if (t) tokenShown(t.token);
      } }, 'New token') : '']), 'account')));
}

// --- ApplicationSets -------------------------------------------------------

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

function appRel(namespace, name) {
  return `applications/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
}

// watchAppSets redraws the page (at most every half second) when an
// ApplicationSet changes; name limits it to one.
function watchAppSets(name) {
  const q = new URLSearchParams({ resourceVersion: '1' });
  if (name) q.set('name', name);
  const es = new EventSource('api/v1/stream/applicationsets?' + q);
  let timer;
  es.onmessage = () => { clearTimeout(timer); timer = setTimeout(() => { es.close(); render(); }, 500); };
  const prev = stopStream;
  stopStream = () => { clearTimeout(timer); es.close(); prev(); };
}

async function renderAppSets(user) {
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

async function renderAppSet(user, r) {
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

window.addEventListener('popstate', render);
render();
