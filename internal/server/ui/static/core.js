// The UI's core: API calls, routing, element building, dialogs, the
// live event streams and the pieces every page shares.


import { statusGlyph } from './icons.js';

export const root = document.getElementById('app');

// api calls the API under the page's base; a 401 sends the user to the
// login page and back here afterwards.
export async function api(path, options = {}) {
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

export function base() {
  return new URL(document.baseURI).pathname;
}

// extensionPages are the system-level UI extensions (see ext.js), each
// with its title, path and component, linked from the top bar.
export const extensionPages = [];

// route is where the URL points, relative to the base.
function route() {
  const rel = location.pathname.slice(base().length).replace(/\/+$/, '');
  const parts = rel.split('/').filter(Boolean).map(decodeURIComponent);
  const ext = extensionPages.find((e) => e.path && (rel === e.path || rel.startsWith(e.path + '/')));
  if (ext) return { name: 'extension', extension: ext };
  if (parts[0] === 'login') return { name: 'login' };
  if (parts[0] === 'applications' && parts[1] === 'new') return { name: 'new' };
  if (parts[0] === 'applications' && parts.length === 3) return { name: 'app', namespace: parts[1], app: parts[2] };
  if (parts[0] === 'applicationsets' && parts.length === 3) return { name: 'appset', namespace: parts[1], appset: parts[2] };
  if (parts[0] === 'applicationsets') return { name: 'appsets' };
  if (parts[0] === 'settings' && parts[1] === 'projects' && parts.length === 3) return { name: 'project', project: parts[2] };
  if (parts[0] === 'settings') return { name: ['clusters', 'projects', 'accounts', 'certificates', 'gpgkeys'].includes(parts[1]) ? parts[1] : 'repositories' };
  if (parts[0] === 'user-info') return { name: 'userinfo' };
  if (parts[0] === 'help') return { name: 'help' };
  return { name: 'applications' };
}

export function navigate(rel, replace) {
  const url = new URL(rel, document.baseURI);
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  render();
}

// h makes an element: h('a', {href: 'x', onclick: f}, 'text', child…).
export function h(tag, attrs = {}, ...children) {
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
export function link(rel, text, attrs = {}) {
  return h('a', { href: rel, ...attrs, onclick: (e) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    navigate(rel);
  } }, text);
}

// leaving are what stops the page's streams (event sources, sockets)
// when another page is drawn, each marked whether it lives on when the
// same page is drawn again (a live update).
let leaving = [];

// drawnPath is the path of the page drawn last.
let drawnPath = '';

// onLeave runs stop when the page is left; with throughRedraws, not when
// the same page is drawn again, only when another is (a resource panel's
// log stream or terminal outlives the app page's live updates).
export function onLeave(stop, throughRedraws = false) {
  leaving.push({ stop, throughRedraws });
}

// pages draw each route's page; main.js fills it.
const pages = {};

// setPages registers the pages by route name.
export function setPages(p) {
  Object.assign(pages, p);
}

// leave stops the page's streams: those that live through redraws only
// when the page drawn next is another, or none is.
function leave(redraw) {
  const stops = leaving.filter((l) => !(redraw && l.throughRedraws));
  leaving = leaving.filter((l) => redraw && l.throughRedraws);
  for (const l of stops) l.stop();
}

// A document left for another one, or kept in the back-forward cache,
// closes its streams first: a browser opens only six connections to one
// host, and streams of pages no longer shown would hold them until they
// time out. Shown again from that cache, the page is drawn afresh.
addEventListener('pagehide', () => leave(false));
addEventListener('pageshow', (e) => {
  if (e.persisted) render();
});

export async function render() {
  leave(location.pathname === drawnPath);
  drawnPath = location.pathname;
  notices().replaceChildren();
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
  if (r.name === 'login') return pages.login().then(() => true);
  const user = await api('api/v1/session/userinfo');
  if (!user.loggedIn) {
    const back = location.pathname.slice(base().length) + location.search;
    navigate('login?return_url=' + encodeURIComponent(back), true);
    return false;
  }
  await pages[r.name](user, r);
  return true;
}

// notices lists, above the page, what failed without stopping the page
// (a list it could not load, a check it could not make); drawing another
// page clears it.
function notices() {
  let box = document.getElementById('notices');
  if (!box) {
    box = h('ul', { id: 'notices', class: 'notices', role: 'status', 'aria-live': 'polite' });
    root.before(box);
  }
  return box;
}

// warn adds message to the notices.
export function warn(message) {
  notices().append(h('li', { class: 'alert-box' }, message));
}

// shown is a catch handler that reports what failed in the notices and
// lets the page go on with value: api(…).catch(shown('Events', [])).
export function shown(what, value) {
  return (err) => {
    if (err.message !== 'session expired') warn(`${what}: ${err.message}`);
    return value;
  };
}

export function showError(err) {
  let box = document.getElementById('error');
  if (!box) {
    box = h('div', { id: 'error', role: 'alert', class: 'alert-box' });
    root.prepend(box);
  }
  box.textContent = err.message;
}

// customize applies argocd-cm's ui.cssurl (a style sheet loaded after
// Capstan's) and ui.banner* (a banner at the top or bottom of every page,
// closable unless permanent), once per page load.
let customized = false;
async function customize() {
  if (customized) return;
  customized = true;
  const s = await settings();
  if (s.uiCssURL) document.head.append(h('link', { rel: 'stylesheet', href: s.uiCssURL, id: 'custom-css' }));
  if (!s.uiBannerContent || (!s.uiBannerPermanent && localStorage.getItem('capstan.banner.closed') === s.uiBannerContent)) return;
  const url = /^https?:\/\//.test(s.uiBannerURL || '') ? s.uiBannerURL : '';
  const banner = h('div', { id: 'banner', class: 'banner ' + (s.uiBannerPosition === 'bottom' ? 'bottom' : 'top'), role: 'region', 'aria-label': 'Announcement' },
    url ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, s.uiBannerContent) : h('span', {}, s.uiBannerContent),
    s.uiBannerPermanent ? '' : h('button', { type: 'button', id: 'banner-close', 'aria-label': 'Close the announcement', onclick: () => {
      localStorage.setItem('capstan.banner.closed', s.uiBannerContent);
      banner.remove();
    } }, '×'));
  if (s.uiBannerPosition === 'bottom') document.body.append(banner); else document.body.prepend(banner);
}

export function header(user) {
  customize();
  return h('header', { class: 'top' },
    link('applications', 'Capstan', { class: 'brand' }),
    h('nav', {}, link('applications', 'Applications'), ' ', link('applicationsets', 'ApplicationSets', { id: 'nav-appsets' }), ' ',
      link('settings/repositories', 'Settings', { id: 'nav-settings' }), ' ', link('help', 'Help', { id: 'nav-help' }),
      extensionPages.map((e) => [' ', link(e.path, e.title, { class: 'nav-extension', 'data-extension': e.path })])),
    h('span', { class: 'user' }, link('user-info', user.username, { id: 'nav-user', 'aria-label': `User info of ${user.username}` }),
      h('button', { type: 'button', id: 'logout', onclick: async () => {
        await fetch('api/v1/session', { method: 'DELETE', credentials: 'same-origin' });
        navigate('login');
      } }, 'Log out')));
}

// statusBadge is a status with its colour and mark, the same on every
// page; compact shows the mark alone (the name kept for screen readers
// and as the tooltip).
export function statusBadge(kind, status, compact) {
  const glyph = statusGlyph(status);
  return h('span', { class: 'status ' + String(status).toLowerCase() + (compact ? ' compact' : ''), ['data-' + kind]: status, title: compact ? status : null },
    glyph ? [h('span', { class: 'glyph', 'aria-hidden': 'true' }, glyph), compact ? '' : ' '] : '', h('span', { class: compact ? 'sr' : 'word' }, status));
}

// newestSeen is the newest resource version the event stream has shown,
// across redraws: a page drawn from an older list does not hear the same
// change twice.
let newestSeen = 0;

// watchApplications follows the event stream from resourceVersion and
// calls changed (at most every half second) when an Application changes
// after it.
export function watchApplications(resourceVersion, changed, name) {
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
  onLeave(() => { clearTimeout(timer); es.close(); });
}

// deepLinks shows the deep links an API's links call answers (argocd-cm's
// application.links, resource.links, project.links): the http(s) ones,
// each opening in a new tab, filled in when load resolves.
export function deepLinks(id, load) {
  const list = h('ul', { id, class: 'links plain' });
  load.then((links) => list.replaceChildren(...((links && links.items) || []).filter((l) => /^https?:\/\//.test(l.url || ''))
    .map((l) => h('li', {}, h('a', { href: l.url, target: '_blank', rel: 'noopener noreferrer', title: l.description || null }, l.title || l.url)))));
  return list;
}

let settingsOnce;

// settings are the API's public settings, read once per page load.
export function settings() {
  settingsOnce = settingsOnce || api('api/v1/settings').catch(shown('Reading the settings', {}));
  return settingsOnce;
}

// can asks the API whether the user may do action on the app, named as
// RBAC names it: <project>/<name>, or <project>/<namespace>/<name>
// outside the control namespace.
export async function can(action, app, resource = 'applications') {
  const s = await settings();
  const project = app.spec.project || 'default';
  const object = app.metadata.namespace === s.controllerNamespace ?
    `${project}/${app.metadata.name}` : `${project}/${app.metadata.namespace}/${app.metadata.name}`;
  try {
    const r = await api(`api/v1/account/can-i/${resource}/${action}/${object.split('/').map(encodeURIComponent).join('/')}`);
    return r.value === 'yes';
  } catch (err) {
    return shown(`Checking whether you may ${action} ${object}`, false)(err);
  }
}

export function appPath(app) {
  return `api/v1/applications/${encodeURIComponent(app.metadata.name)}`;
}

export function appQuery(app) {
  return 'appNamespace=' + encodeURIComponent(app.metadata.namespace);
}

// resourceKey names a resource node or status entry uniquely.
export function resourceKey(n) {
  return `${n.group || ''}/${n.kind}/${n.namespace || ''}/${n.name}`;
}

// dialog opens a modal with a form; submit gets the form's elements.
export function dialog(title, fields, action, submit) {
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

export function check(name, label, checked) {
  return h('label', { class: 'check' }, h('input', { type: 'checkbox', name, id: 'opt-' + name, checked }), ' ', label);
}

// table is a simple table of rows (arrays of cells), with a class per row.
export function table(id, head, rows, rowClass) {
  return h('table', { id }, h('thead', {}, h('tr', {}, head.map((c) => h('th', {}, c)))),
    h('tbody', {}, rows.map((cells) => h('tr', { class: rowClass }, cells.map((c) => h('td', {}, c))))));
}

// tokenShown shows a new token once, to be copied.
export function tokenShown(token) {
  dialog('New token', [h('p', {}, 'Copy it now: it is not shown again.'), h('textarea', { id: 'new-token', rows: '4', readonly: true }, token)], 'Done', async () => {});
}

// call runs an API call that changes something, then redraws the page;
// a refusal shows the API's message.
export async function call(path, options) {
  try {
    const out = await api(path, options);
    render();
    return out;
  } catch (err) {
    showError(err);
  }
}

// lines splits a textarea's text into its non-empty lines.
export function lines(text) {
  return text.split('\n').map((l) => l.trim()).filter(Boolean);
}

export function appRel(namespace, name) {
  return `applications/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
}
