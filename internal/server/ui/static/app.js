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
  if (parts[0] === 'applications' && parts.length === 3) return { name: 'app', namespace: parts[1], app: parts[2] };
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
  for (const c of children.flat()) {
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
    if (r.name === 'login') return await renderLogin();
    const user = await api('api/v1/session/userinfo');
    if (!user.loggedIn) {
      const back = location.pathname.slice(base().length) + location.search;
      return navigate('login?return_url=' + encodeURIComponent(back), true);
    }
    if (r.name === 'app') return await renderApp(user, r);
    return await renderApplications(user);
  } catch (err) {
    if (err.message !== 'session expired') showError(err);
  }
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
    h('nav', {}, link('applications', 'Applications')),
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
  let settings = {};
  try { settings = await api('api/v1/settings'); } catch (e) { /* the form still works */ }
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
  (settings.oidcConfig || settings.dexConfig) ?
    h('a', { class: 'button sso', href: 'auth/login?return_url=' + encodeURIComponent(base() + safeReturn(back)) },
      'Log in via ' + ((settings.oidcConfig && settings.oidcConfig.name) || 'SSO')) : null);
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
      values.map((v) => h('option', { value: v, selected: params.get(key) === v }, v))));

  const statusBoxes = (key, label, counts) => h('fieldset', { class: 'statuses', id: 'filter-' + key }, h('legend', {}, label),
    Object.keys(counts).sort().map((s) => h('label', {},
      h('input', { type: 'checkbox', value: s, checked: params.getAll(key).includes(s), onchange: (e) => {
        const chosen = new Set(params.getAll(key));
        if (e.target.checked) chosen.add(s); else chosen.delete(s);
        set(key, [...chosen]);
      } }), ' ', h('span', { class: 'status ' + s.toLowerCase() }, s), ' ', h('span', { class: 'count' }, String(counts[s])))));

  const filters = h('aside', { class: 'filters', 'aria-label': 'Filters' },
    search,
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
    h('main', {}, h('div', { class: 'toolbar' }, h('h1', {}, 'Applications'), toggle), pager,
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

// watchApplications follows the event stream from resourceVersion and
// calls changed (at most every half second) when an Application changes.
function watchApplications(resourceVersion, changed, name) {
  const q = new URLSearchParams({ resourceVersion });
  if (name) q.set('name', name);
  const es = new EventSource('api/v1/stream/applications?' + q);
  let timer;
  es.onmessage = () => {
    clearTimeout(timer);
    timer = setTimeout(() => { es.close(); changed(); }, 500);
  };
  stopStream = () => { clearTimeout(timer); es.close(); };
}

// --- one application ---------------------------------------------------

async function renderApp(user, r) {
  const app = await api(`api/v1/applications/${encodeURIComponent(r.app)}?appNamespace=${encodeURIComponent(r.namespace)}`);
  const st = app.status || {};
  const resources = (st.resources || []).map((res) => h('tr', { class: 'resource', 'data-kind': res.kind, 'data-name': res.name },
    h('td', {}, res.kind), h('td', {}, res.namespace || ''), h('td', {}, res.name),
    h('td', {}, statusBadge('sync', res.status || 'Unknown')), h('td', {}, res.health ? statusBadge('health', res.health.status) : '')));
  root.replaceChildren(header(user), h('main', { class: 'detail' },
    h('p', {}, link('applications', '← Applications')),
    h('h1', {}, app.metadata.name),
    h('p', { id: 'app-status' }, statusBadge('health', (st.health && st.health.status) || 'Unknown'), ' ',
      statusBadge('sync', (st.sync && st.sync.status) || 'Unknown'),
      st.sync && st.sync.revision ? h('code', {}, ' ' + st.sync.revision.slice(0, 7)) : ''),
    h('table', { id: 'resources' }, h('thead', {}, h('tr', {}, ['Kind', 'Namespace', 'Name', 'Sync', 'Health'].map((c) => h('th', {}, c)))),
      h('tbody', {}, resources))));
  watchApplications(app.metadata.resourceVersion, () => render(), app.metadata.name);
}

window.addEventListener('popstate', render);
render();
